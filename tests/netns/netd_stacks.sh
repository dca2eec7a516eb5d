#!/usr/bin/env bash
# netd_stacks.sh: Compose networks isolated by mts-netd on 3 nodes in network namespaces joined only by a test bridge (real wireguard-go, real containers placed by mts-reconciled): reconciled has netd attach each task before the shim runs it in that namespace; two stacks, each with its own default network, cannot reach each other by address (across nodes and on one node), a service on an external network both stacks list is reached from both; a capture on the bridge during the traffic holds only WireGuard UDP and Noise TCP, never the payload; a netd restart while the tasks run keeps every address and connection; stack rm detaches every task.
. "$(dirname "$0")/lib.sh"
for c in tcpdump busybox wireguard-go runc; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_SHIM=1 MTS_CLUSTER_NETD_CONF="seccomp_debug = yes"
WGPORT=51820
CTL=$BIN/mtsctl
ctl() { g_ctl "$@"; }
hub() { local ns; ns=$(n_ns 1) && echo "${ns%-n1}-hub"; }
ndir() { echo "$MTS_CLUSTER_DIR/n$1"; }

n_up 3 || { cat "$T_DIR/up.log"; fail "3 nodes up in namespaces, each with netd, a shim and reconciled"; t_done; }
pass "3 nodes up in namespaces, each with netd, a shim and reconciled"
TCPDUMP=
stop_capture() { [ -n "$TCPDUMP" ] && kill -INT "$TCPDUMP" 2>/dev/null; wait "$TCPDUMP" 2>/dev/null; TCPDUMP=; }
trap 'stop_capture; n_cleanup' EXIT
"$TOP/scripts/mkimage" "$T_DIR/bb" >/dev/null
for i in 1 2 3; do ctl "$i" image import "$T_DIR/bb" >/dev/null || fail "image import on node $i"; done
digests() { local i; for i in 1 2 3; do [ "$(ctl "$i" state ls d/ | tail -n +2 | wc -l)" = 3 ] || return 1; done; }
check "every node holds the 3 d/ digests" wait_for 30 digests

MARKER="mts-stack-marker-$TAG"
# Global services on nodes 1 and 3 only: a task of each on both ends of
# the overlay. sa: web (an HTTP server on sa_default only) and cli (on
# sa_default and the external network shared); sb: cli (sb_default and
# shared); ss: api (an HTTP server on shared only).
httpd="mkdir -p /w && echo $MARKER-\$\$(hostname) >/w/index.html && exec httpd -f -p 8080 -h /w"
svc() { # NAME COMMAND NETWORKS...
	local name=$1 cmd=$2 n
	shift 2
	printf '  %s:\n    image: busybox:latest\n    command: ["sh", "-c", "%s"]\n    stop_grace_period: 1s\n' "$name" "$cmd"
	printf '    deploy:\n      mode: global\n      placement:\n        constraints: ["node.hostname != n2"]\n'
	if [ $# -gt 0 ]; then
		printf '    networks:\n'
		for n in "$@"; do printf '      - %s\n' "$n"; done
	fi
}
{ echo "services:"; svc web "$httpd"; svc cli "exec sleep 3600" default shared
  printf 'networks:\n  shared:\n    external: true\n'; } >"$T_DIR/sa.yml"
{ echo "services:"; svc cli "exec sleep 3600" default shared
  printf 'networks:\n  shared:\n    external: true\n'; } >"$T_DIR/sb.yml"
{ echo "services:"; svc api "$httpd" shared
  printf 'networks:\n  shared:\n    external: true\n'; } >"$T_DIR/ss.yml"
for s in sa sb ss; do
	ctl 1 deploy -c "$T_DIR/$s.yml" --stack "$s" --wait 60 >"$T_DIR/deploy-$s.log" 2>&1 ||
		{ fail "deploy stack $s"; cat "$T_DIR/deploy-$s.log"; }
done
# task I SVC: SVC's running task on node I
task() {
	ctl 1 -o json service ps "$2" | python3 -c '
import json,sys; print([t["task"] for t in json.load(sys.stdin) if t["node_name"]==sys.argv[1] and t["state"]=="running"][0])' "n$1" 2>/dev/null
}
# addr I TASK: the task's address in node I's netd
addr() {
	ctl "$1" -o json overlay status | python3 -c '
import json,sys; print([a["address"].split("/")[0] for a in json.load(sys.stdin)["attachments"] if a["task"]==sys.argv[1]][0])' "$2" 2>/dev/null
}
all_running() {
	local s i
	for s in sa_web sa_cli sb_cli ss_api; do for i in 1 3; do [ -n "$(task $i $s)" ] || return 1; done; done
}
check "4 global services run on nodes 1 and 3" wait_for 60 all_running
for s in sa_web sa_cli sb_cli ss_api; do
	for i in 1 3; do
		t=$(task $i $s)
		eval "T_${s}_$i=\$t"
		eval "A_${s}_$i=\$(addr $i \$t)"
	done
done
echo "  sa_web: $A_sa_web_1 $A_sa_web_3  sa_cli: $A_sa_cli_1 $A_sa_cli_3  sb_cli: $A_sb_cli_1 $A_sb_cli_3  ss_api: $A_ss_api_1 $A_ss_api_3"
check "every task has an address of its node's /24 from netd" \
	sh -c "[ -n '$A_sa_web_1' ] && [ -n '$A_sa_web_3' ] && [ -n '$A_sb_cli_1' ] && [ -n '$A_ss_api_3' ]"
check "the container's eth0 is netd's attachment" \
	sh -c "'$CTL' -r '$(g_run 1)' exec '$T_sb_cli_1' -- ip -4 addr show eth0 | grep -q 'inet $A_sb_cli_1/24'"
nets_of() { ctl "$1" -o json overlay status | python3 -c '
import json,sys; print(",".join([a["networks"] for a in json.load(sys.stdin)["attachments"] if a["task"]==sys.argv[1]][0]))' "$2"; }
check "sa_cli is on sa_default and shared, ss_api on shared only" \
	sh -c "[ '$(nets_of 1 "$T_sa_cli_1")' = sa_default,shared ] && [ '$(nets_of 3 "$T_ss_api_3")' = shared ]"
rec_addr() { ctl 1 state get --value "t/$(g_id 3)/$T_sa_web_3" 2>/dev/null | grep -aqF "$A_sa_web_3"; }
check "the t/ record of a task carries its address" rec_addr

nsenter --net="/run/netns/$(hub)" tcpdump -i br0 --immediate-mode -U -w "$T_DIR/bridge.pcap" >"$T_DIR/tcpdump.log" 2>&1 &
TCPDUMP=$!
sleep 0.5
# get I TASK ADDR: an HTTP GET from TASK (on node I) to ADDR:8080 answers
get() { ctl "$1" exec "$2" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 $3 8080" 2>/dev/null | grep -q "$MARKER"; }
noget() { ! ctl "$1" exec "$2" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 $3 8080" 2>/dev/null | grep -q "$MARKER"; }
check "stack sa: a task on node 1 reaches a task of its own network on node 3 by address" wait_for 20 get 1 "$T_sa_cli_1" "$A_sa_web_3"
check "stack sa: and one on its own node" wait_for 10 get 1 "$T_sa_cli_1" "$A_sa_web_1"
check "stack sb's task on node 1 cannot reach stack sa's web on node 3" noget 1 "$T_sb_cli_1" "$A_sa_web_3"
check "nor sa's web on its own node" noget 1 "$T_sb_cli_1" "$A_sa_web_1"
check "and sb's task on node 3 cannot reach sa's web on node 1" noget 3 "$T_sb_cli_3" "$A_sa_web_1"
check "the external network shared: ss_api on node 3 is reached from stack sb (node 1)" wait_for 10 get 1 "$T_sb_cli_1" "$A_ss_api_3"
check "and from stack sa (node 1)" wait_for 10 get 1 "$T_sa_cli_1" "$A_ss_api_3"
check "and on the same node from stack sa (node 3)" wait_for 10 get 3 "$T_sa_cli_3" "$A_ss_api_3"
check "and from stack sb (node 3)" wait_for 10 get 3 "$T_sb_cli_3" "$A_ss_api_3"
check "sa's web, not on shared, cannot reach ss_api" noget 1 "$T_sa_web_1" "$A_ss_api_3"
drops() { n_in "$1" nft list chain inet mts isolate | grep -Eo 'counter packets [0-9]+' | awk '{print $3}'; }
check "node 3's table counted the refused packets ($(drops 3))" [ "$(drops 3)" -gt 0 ]

sleep 1
stop_capture
gports="port $(g_port 1) or port $(g_port 2) or port $(g_port 3)"
tcpdump -nn -r "$T_DIR/bridge.pcap" "(ip and not igmp and not (udp port $WGPORT) and not (tcp and ($gports))) or (ip6 and not src net fe80::/10 and not src host ::)" 2>/dev/null >"$T_DIR/other.txt"
wg=$(tcpdump -nn -r "$T_DIR/bridge.pcap" "udp port $WGPORT" 2>/dev/null | wc -l)
check "the bridge carried the tasks' traffic as WireGuard UDP ($wg packets)" [ "$wg" -gt 4 ]
check "and no IP but WireGuard UDP and Noise TCP" [ ! -s "$T_DIR/other.txt" ]
[ -s "$T_DIR/other.txt" ] && head -5 "$T_DIR/other.txt"
check "no overlay address in the clear on the bridge" \
	sh -c "[ -z \"\$(tcpdump -nn -r '$T_DIR/bridge.pcap' net 10.210.0.0/16 2>/dev/null)\" ]"
check "the page's marker never crossed the bridge in plaintext" sh -c "! grep -aq '$MARKER' '$T_DIR/bridge.pcap'"

# --- netd restarts under running tasks: same addresses, same reachability -------
netd_pid() { pgrep -f "^$BIN/mts-netd -c $(ndir "$1")/mts.conf" | head -1; }
# a connection open across the restart: a download paced by a slow sender
ctl 3 exec "$T_ss_api_3" -- sh -c "(i=0; while [ \$i -lt 8 ]; do echo $MARKER-slow-\$i; sleep 0.7; i=\$((i+1)); done) | nc -l -p 9000" >/dev/null 2>&1 &
SLOW=$!
listening() { nsenter --net="$(g_run 3)/netd/ns/$T_ss_api_3" ss -ltn | grep -q ':9000 '; }
wait_for 10 listening || fail "a listener on ss_api's task, port 9000"
# (nc's stdin held open: exec gives it an empty one, on whose end it quits)
ctl 1 exec "$T_sa_cli_1" -- sh -c "sleep 15 | nc $A_ss_api_3 9000" >"$T_DIR/slow.out" 2>/dev/null &
RECV=$!
wait_for 10 grep -q "$MARKER-slow-0" "$T_DIR/slow.out" || fail "the slow connection started"
before1=$(ctl 1 -o json overlay status | python3 -c 'import json,sys; print(sorted((a["task"],a["address"]) for a in json.load(sys.stdin)["attachments"]))')
for i in 1 3; do old=$(netd_pid $i); kill -KILL "$old"; eval "old_$i=$old"; done
restarted() { local p; p=$(netd_pid "$1"); [ -n "$p" ] && [ "$p" != "$2" ] && ctl "$1" overlay status >/dev/null 2>&1; }
check "netd on nodes 1 and 3 restarted by init (SIGKILL)" wait_for 15 sh -c "$(declare -f restarted netd_pid ctl g_ctl ndir); BIN=$BIN GOSSIP_CLUSTER=$GOSSIP_CLUSTER MTS_CLUSTER_DIR=$MTS_CLUSTER_DIR; restarted 1 $old_1 && restarted 3 $old_3"
wait "$RECV" 2>/dev/null
wait "$SLOW" 2>/dev/null
check "a connection open across both restarts got all 8 lines ($(grep -c "$MARKER-slow" "$T_DIR/slow.out"))" [ "$(grep -c "$MARKER-slow" "$T_DIR/slow.out")" = 8 ]
after1=$(ctl 1 -o json overlay status | python3 -c 'import json,sys; print(sorted((a["task"],a["address"]) for a in json.load(sys.stdin)["attachments"]))')
check "no address moved on node 1" [ "$before1" = "$after1" ]
check "after the restarts sa still reaches its own network across nodes" wait_for 10 get 1 "$T_sa_cli_1" "$A_sa_web_3"
check "and sb still cannot reach sa" noget 1 "$T_sb_cli_1" "$A_sa_web_3"
check "and the shared network still works" wait_for 10 get 1 "$T_sb_cli_1" "$A_ss_api_3"

# --- mtsctl network ls / inspect ----------------------------------------------------
netls() { ctl 2 -o json network ls | python3 -c '
import json,sys; n={r["name"]: r for r in json.load(sys.stdin)}
assert set(n) == {"sa_default", "sb_default", "shared"}, n
assert n["shared"]["scope"] == "external" and n["sa_default"]["scope"] == "stack sa", n
assert n["shared"]["nservices"] == 3 and n["shared"]["ntasks"] == 6 and n["sa_default"]["ntasks"] == 4, n
assert len(n["shared"]["subnets"]) == 2, n'; }
check "network ls (on node 2, which runs none of the tasks): 3 networks, scopes, counts, two /24s" netls
netinspect() { ctl 3 -o json network inspect shared | python3 -c '
import json,sys; j=json.load(sys.stdin); a=sys.argv[1:]
assert j["subnet"] == "10.210.0.0/16", j
assert sorted(j["services"]) == ["sa_cli", "sb_cli", "ss_api"], j
got = {t["task"]: t["address"] for t in j["tasks"]}
assert got.get(a[0]) == a[1] and got.get(a[2]) == a[3], (got, a)
assert all(t["node_name"] in ("n1", "n3") and t["state"] == "running" for t in j["tasks"]), j' \
	"$T_ss_api_3" "$A_ss_api_3" "$T_sb_cli_1" "$A_sb_cli_1"; }
check "network inspect shared: the cluster CIDR, its services, every task with its node and address" netinspect
check "network inspect's table" sh -c "'$CTL' -r '$(g_run 1)' network inspect sa_default | grep -Eq '^$T_sa_web_3 +sa_web +n3 +$A_sa_web_3 +running'"
check "network inspect of an unknown network exits 5" sh -c "'$CTL' -r '$(g_run 1)' network inspect nosuch 2>/dev/null; [ \$? = 5 ]"

# --- stack rm: stop, then detach ---------------------------------------------------
for s in sa sb ss; do ctl 1 stack rm "$s" >/dev/null 2>&1 || ctl 1 service rm "${s}_web" >/dev/null 2>&1; done
no_atts() { local i; for i in 1 3; do [ "$(ctl "$i" -o json overlay status | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["attachments"]))')" = 0 ] || return 1; done; }
check "stack rm: every task detached on nodes 1 and 3" wait_for 30 no_atts
check "and their namespaces are gone" sh -c "[ -z \"\$(find '$(g_run 1)/netd/ns' '$(g_run 3)/netd/ns' -mindepth 1)\" ]"
order() { # the task's stop came before its detach in node 1's reconciled log
	local t=$T_sa_web_1 log; log=$(ndir 1)/log/reconciled.log
	grep -n "task $t" "$log" | grep -q 'attached by netd' &&
		[ "$(grep -n "task $t: starting" "$log" | head -1 | cut -d: -f1)" -gt "$(grep -n "task $t: attached by netd" "$log" | head -1 | cut -d: -f1)" ]
}
check "reconciled attached sa_web's task before it asked the shim to start it" order
check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n*/log/init.log"
t_done

#!/usr/bin/env bash
# netd_dns.sh: mts-netd's DNS server, VIPs and published ports on 3 nodes in network namespaces (real wireguard-go, reconciled running two stacks' tasks through the shims): from a task's namespace on any node, a service's short name, <service>.<stack>.mts and tasks.<service> resolve to its VIP or its tasks' addresses, only for services that share a network with the asker; other names are forwarded upstream; PTR of task addresses and VIPs (the task's name resolving back), AAAA NODATA; malformed queries get FORMERR or nothing and the server lives on; connections through the api VIP spread over both api tasks; front's published port answers on every node; when the node of one of two api tasks is killed, DNS and the VIP drop it within SWIM's detection time + 1 s and sampled VIP connections keep succeeding.
. "$(dirname "$0")/lib.sh"
for c in busybox wireguard-go runc python3; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"

CTL=$BIN/mtsctl
DNSQ=$TOP/tests/netns/dnsq.py
UPPORT=5353
# node 1's netd forwards to a stand-in resolver in node 1's namespace
# (every node's own 127.0.0.1)
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_SHIM=1 MTS_CLUSTER_NETD_CONF="seccomp_debug = yes\ndns_upstream = 127.0.0.1:$UPPORT"
ctl() { g_ctl "$@"; }

n_up 3 || { cat "$T_DIR/up.log"; fail "3 nodes up in namespaces, each with netd"; t_done; }
pass "3 nodes up in namespaces, each with netd"
check "all alive" wait_for 15 g_all_alive 3 1 2 3
"$TOP/scripts/mkimage" "$T_DIR/bb" >/dev/null
for i in 1 2 3; do ctl "$i" image import "$T_DIR/bb" >/dev/null; done
digests() { local i; for i in 1 2 3; do [ "$(ctl "$i" state ls d/ | tail -n +2 | wc -l)" = 3 ] || return 1; done; }
check "every node holds the 3 d/ digests" wait_for 30 digests

cat >"$T_DIR/shop.yml" <<'YML'
services:
  front:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    ports: ["8080:80"]
  api:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    networks: [default, shared]
    deploy:
      replicas: 2
      placement:
        max_replicas_per_node: 1
  db:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      endpoint_mode: dnsrr
networks:
  shared:
    external: true
YML
cat >"$T_DIR/other.yml" <<'YML'
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
  pub:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    networks: [shared]
networks:
  shared:
    external: true
YML
check "deploy shop" sh -c "'$CTL' -r '$(g_run 1)' deploy -c '$T_DIR/shop.yml' --stack shop --wait 60 >'$T_DIR/deploy.log' 2>&1"
check "deploy other" sh -c "'$CTL' -r '$(g_run 2)' deploy -c '$T_DIR/other.yml' --stack other --wait 60 >>'$T_DIR/deploy.log' 2>&1"

# tasks STACK: "task node-index" of the stack's running tasks, as node
# $ASK (1) sees them
tasks() {
	ctl "${ASK:-1}" -o json stack ps "$1" | python3 -c '
import json,sys
ids={}
for i in (1,2,3):
    ids[open(sys.argv[1]+"/n%d/id" % i).read().strip()] = i
for t in json.load(sys.stdin):
    if t["state"] == "running":
        print(t["task"], ids.get(t["node"], 0))' "$MTS_CLUSTER_DIR"
}
all_running() { [ "$(tasks shop | wc -l)" = 4 ] && [ "$(tasks other | wc -l)" = 2 ]; }
all_running || wait_for 60 all_running || { fail "6 tasks running"; tasks shop; tasks other; t_done; }
pass "6 tasks running"
# reconciled had netd attach each task before it started it: attaching
# again (idempotent, networks kept) returns the task's address.
declare -A ADDR NODE
while read -r t i; do
	a=$(ctl "$i" -o json overlay attach "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])')
	ADDR[$t]=$a
	NODE[$t]=$i
done < <(tasks shop; tasks other)
[ "${#ADDR[@]}" = 6 ] || { fail "each of the 6 tasks attached on its node"; t_done; }
pass "each of the 6 tasks attached on its node"
task_of() { local t; for t in "${!ADDR[@]}"; do case $t in "$1".*) echo "$t" ;; esac; done | sort; }
front=$(task_of shop_front)
db=$(task_of shop_db)
web=$(task_of other_web)
pub=$(task_of other_pub)
apis=$(task_of shop_api | tr '\n' ' ')
declare -A GW
for i in 1 2 3; do
	GW[$i]=$(ctl "$i" -o json overlay status | python3 -c 'import json,sys; s=json.load(sys.stdin)["subnet"]; print(s.rsplit(".",1)[0]+".1")')
done
gw() { echo "${GW[$1]}"; }
# q TASK NAME [TYPE]: the answer to TASK's query, asked from its
# namespace of its node's DNS server
q() {
	local t=$1 i=${NODE[$1]}
	shift
	nsenter --net="$(g_run "$i")/netd/ns/$t" python3 "$DNSQ" "$(gw "$i")" "$@"
}
addrs_of() { local t out=; for t in $(task_of "$1"); do out="$out ${ADDR[$t]}"; done; echo "$out" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/^ *//; s/ *$//'; }
want_api_tasks="NOERROR $(addrs_of shop_api)"
resolves() { [ "$(q "$1" "$2")" = "$3" ]; }
# resolves_t TASK NAME TYPE WANT: TASK's query of NAME's TYPE answers WANT
resolves_t() { [ "$(q "$1" "$2" "$3")" = "$4" ]; }
check "front ($front on node ${NODE[$front]}) resolves tasks.api to the 2 api tasks" \
	wait_for 10 resolves "$front" tasks.api "$want_api_tasks"
echo "tasks.api: $(q "$front" tasks.api)"
vip=$(q "$front" api | awk '{print $2}')
check "api (endpoint_mode vip) resolves to one VIP in the VIP /24 ($vip)" sh -c "echo '$vip' | grep -q '^10\.210\.255\.'"
endpoint_ok() {
	ctl "$1" service inspect shop_api | python3 -c '
import json,sys; e=json.load(sys.stdin)["endpoint"]
assert e["mode"] == "vip" and e["vip"] == sys.argv[1], e
assert sorted(e["task_addresses"]) == sys.argv[2].split(), e' "$vip" "$(addrs_of shop_api)"
}
all_endpoints() { endpoint_ok 1 && endpoint_ok 2 && endpoint_ok 3; }
check "service inspect shop_api on every node shows the same VIP and the 2 task addresses" all_endpoints
check "service inspect shop_db: dnsrr, no VIP" sh -c "'$CTL' -r '$(g_run 2)' service inspect shop_db | python3 -c 'import json,sys; e=json.load(sys.stdin)[\"endpoint\"]; assert e[\"mode\"]==\"dnsrr\" and e[\"vip\"]==\"\", e'"
for i in 1 2 3; do
	asker=$(for t in "${!NODE[@]}"; do [ "${NODE[$t]}" = "$i" ] && case $t in shop_*) echo "$t" ;; esac; done | head -1)
	[ -n "$asker" ] || continue
	check "from $asker on node $i: api.shop.mts is the same VIP" resolves "$asker" api.shop.mts "NOERROR $vip"
	check "from $asker on node $i: db (dnsrr) is db's task address" resolves "$asker" db "NOERROR ${ADDR[$db]}"
done
check "tasks.api.shop.mts from front" resolves "$front" tasks.api.shop.mts "$want_api_tasks"
check "AAAA of api: no records, no error" [ "$(q "$front" api AAAA)" = NOERROR ]
check "AAAA of tasks.api: no records, no error (NODATA)" resolves_t "$front" tasks.api AAAA NOERROR
check "AAAA of api.shop.mts: NODATA too" resolves_t "$front" api.shop.mts AAAA NOERROR
# rev ADDR: ADDR's name in in-addr.arpa
rev() { echo "$1" | awk -F. '{print $4"."$3"."$2"."$1".in-addr.arpa"}'; }
a_one=$(echo $apis | cut -d' ' -f1)
check "PTR of an api task's address from front: the task's name (${a_one}.mts.)" resolves_t "$front" "$(rev "${ADDR[$a_one]}")" PTR "NOERROR ${a_one}.mts."
check "... which resolves back to that address" resolves "$front" "${a_one}.mts" "NOERROR ${ADDR[$a_one]}"
check "PTR of api's VIP: api.shop.mts." resolves_t "$front" "$(rev "$vip")" PTR "NOERROR api.shop.mts."
check "PTR of another stack's task from front: NXDOMAIN" resolves_t "$front" "$(rev "${ADDR[$web]}")" PTR NXDOMAIN
outside=$(q "$front" 4.3.2.1.in-addr.arpa PTR)
check "PTR of an address outside the cluster is forwarded, not ours (the upstream not up yet: $outside)" \
	sh -c "case '$outside' in SERVFAIL|REFUSED) true ;; *) false ;; esac"
check "front cannot see other's web: web.other.mts is NXDOMAIN" resolves "$front" web.other.mts NXDOMAIN
check "web cannot see shop's api" resolves "$web" api.shop.mts NXDOMAIN
check "web resolves its own stack's short name" wait_for 5 resolves "$web" web "NOERROR $(q "$web" web.other.mts | awk '{print $2}')"
check "pub (on the external network) sees api (on it too)" resolves "$pub" api.shop.mts "NOERROR $vip"
check "pub does not see db (not on it)" resolves "$pub" db.shop.mts NXDOMAIN
check "an address that is no task's gets nothing of the zone" \
	sh -c "[ \"\$(nsenter --net=/run/netns/$(n_ns 1) python3 '$DNSQ' '$(gw 1)' api.shop.mts)\" = NXDOMAIN ]"

# a real container with the resolv.conf a task gets (--dns, --dns-search:
# what reconciled is to set from netd's Attach), in front's namespace
fi0=${NODE[$front]}
ctl "$fi0" task run --name rc1 --netns "$(g_run "$fi0")/netd/ns/$front" --dns "$(gw "$fi0")" \
	--dns-search shop.mts --dns-search mts busybox -- sleep 300 >/dev/null ||
	fail "task run rc1 with --dns"
rc_up() { ctl "$fi0" exec rc1 -- true 2>/dev/null; }
wait_for 20 rc_up
check "the container's /etc/resolv.conf names node $fi0's DNS server and the search domains" \
	[ "$(ctl "$fi0" exec rc1 -- cat /etc/resolv.conf 2>/dev/null | tr '\n' ' ')" = "nameserver $(gw "$fi0") search shop.mts mts " ]
ns_api() { ctl "$fi0" exec rc1 -- nslookup api 2>/dev/null | grep -q "Address: $vip"; }
check "busybox nslookup api in the container: the VIP, through resolv.conf's server and search domains" ns_api
ctl "$fi0" task stop rc1 >/dev/null 2>&1
ctl "$fi0" task rm rc1 >/dev/null 2>&1
# the service's own container, as reconciled started it in netd's namespace
check "front's container got the same resolv.conf from reconciled" \
	[ "$(ctl "$fi0" exec "$front" -- cat /etc/resolv.conf 2>/dev/null | tr '\n' ' ')" = "nameserver $(gw "$fi0") search shop.mts mts " ]
fr_api() { ctl "$fi0" exec "$front" -- nslookup api 2>/dev/null | grep -q "Address: $vip"; }
check "nslookup api in front's container: the VIP" fr_api
db_name() { ctl "$fi0" exec "$front" -- nslookup db 2>/dev/null | grep -q "Address: ${ADDR[$db]}"; }
check "nslookup db in front's container: db's task (dnsrr)" db_name

# forwarding: names outside the cluster go to the upstream resolver (a
# stand-in in the namespace of the node of some task, i1: the placement
# decides which nodes run tasks, and node 1 can run none); when it is
# silent, SERVFAIL
i1=$(printf '%s\n' "${!NODE[@]}" | sort | head -1)
k1=${NODE[$i1]}
(exec nsenter --net="/run/netns/$(n_ns "$k1")" python3 "$DNSQ" --serve 127.0.0.1 "$UPPORT" 192.0.2.77) &
UPPID=$!
forwarded() { [ "$(q "$i1" example.org)" = "NOERROR 192.0.2.77" ]; }
check "example.org from $i1 is forwarded to node $k1's upstream and answered" wait_for 5 forwarded
kill "$UPPID" 2>/dev/null; wait "$UPPID" 2>/dev/null
silent=$(q "$i1" example.org)
check "with the upstream silent: SERVFAIL after the deadline ($silent)" [ "$silent" = SERVFAIL ]

# malformed queries: FORMERR when the header says query, nothing otherwise
raw() { nsenter --net="$(g_run "${NODE[$front]}")/netd/ns/$front" python3 "$DNSQ" --raw "$(gw "${NODE[$front]}")" "$1"; }
check "compression loop: FORMERR" [ "$(raw 123401000001000000000000c00c00010001)" = FORMERR ]
check "question count past the end: FORMERR" [ "$(raw 12340100ffff0000000000000161000001)" = FORMERR ]
check "huge answer count: FORMERR" [ "$(raw 123401000001ffffffffffff01610000010001)" = FORMERR ]
check "3 bytes: no answer" [ "$(raw 123401)" = none ]
check "a reply sent to the server: no answer" [ "$(raw 123481800000000000000000)" = none ]
check "the server still answers after them" resolves "$front" tasks.api "$want_api_tasks"
tcpq() { nsenter --net="$(g_run "${NODE[$front]}")/netd/ns/$front" python3 "$DNSQ" --tcp "$(gw "${NODE[$front]}")" "$1"; }
check "over TCP: tasks.api from front" [ "$(tcpq tasks.api)" = "$want_api_tasks" ]
check "over TCP: a name outside the cluster is REFUSED (UDP forwards it)" [ "$(tcpq example.org)" = REFUSED ]

# --- the VIP: connections to it reach the api tasks -------------------------
# (busybox httpd in each api task's namespace, answering with its task id)
HTTPD=()
for t in $apis; do
	mkdir -p "$T_DIR/www/$t"
	echo "served-by-$t" >"$T_DIR/www/$t/index.html"
	nsenter --net="$(g_run "${NODE[$t]}")/netd/ns/$t" busybox httpd -f -p 8080 -h "$T_DIR/www/$t" &
	HTTPD+=($!)
done
trap 'kill "${HTTPD[@]}" 2>/dev/null; n_cleanup' EXIT
# get TASK ADDR: the page TASK fetches from ADDR:8080 (busybox's wget
# crashes on this machine's busybox-static: nc speaks HTTP)
get() { nsenter --net="$(g_run "${NODE[$1]}")/netd/ns/$1" sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | busybox nc -w 2 $2 8080" 2>/dev/null | grep -o 'served-by-[^ ]*'; }
first() { get "$front" "$vip" >/dev/null; }
check "front reaches api through its VIP" wait_for 10 first
seen=$(for k in $(seq 1 30); do get "$front" "$vip"; done | sort | uniq -c)
echo "$seen"
check "30 connections to the VIP from front all answered" [ "$(echo "$seen" | awk '{s += $1} END {print s}')" = 30 ]
check "and spread over both api tasks" [ "$(echo "$seen" | wc -l)" = 2 ]
direct=$(get "$front" "${ADDR[$(echo $apis | cut -d' ' -f1)]}")
check "a direct connection to an api task's address works too ($direct)" [ -n "$direct" ]
a_one=$(echo $apis | cut -d' ' -f1)
hp=$(for k in $(seq 1 10); do get "$a_one" "$vip"; done | wc -l)
check "an api task reaches its own VIP, itself included (hairpin): $hp of 10" [ "$hp" = 10 ]

# --- by names alone, from the containers: front -> api, api -> db ----------
mkdir -p "$T_DIR/www/db"
echo "db-answers" >"$T_DIR/www/db/index.html"
nsenter --net="$(g_run "${NODE[$db]}")/netd/ns/$db" busybox httpd -f -p 5432 -h "$T_DIR/www/db" &
HTTPD+=($!)
# by_name TASK NAME PORT: the page TASK's container fetches from NAME:PORT
by_name() { ctl "${NODE[$1]}" exec "$1" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 $2 $3" 2>/dev/null | tail -1; }
fa=$(by_name "$front" api 8080)
check "front's container reaches api by its name alone ($fa)" sh -c "echo '$fa' | grep -q '^served-by-shop_api\.'"
ad=$(by_name "$a_one" db 5432)
check "an api container reaches db by its name alone ($ad)" [ "$ad" = db-answers ]

# --- the front's published port answers on every node ------------------------
# (a server in front's namespace that answers with the client's address)
nsenter --net="$(g_run "${NODE[$front]}")/netd/ns/$front" python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ("front-saw-%s\n" % self.client_address[0]).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
http.server.HTTPServer(("0.0.0.0", 80), H).serve_forever()' &
HTTPD+=($!)
# pub FROM TO: what front says when node FROM's namespace (outside the
# overlay) connects to node TO's address on 8080
pub() {
	n_in "$1" python3 -c '
import socket,sys
s=socket.create_connection((sys.argv[1], 8080), 3)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
d=b""
while True:
    c=s.recv(4096)
    if not c: break
    d+=c
print(d.decode().split("\r\n\r\n",1)[1].strip())' "$(n_addr "$2")" 2>/dev/null
}
fi=${NODE[$front]}
other=$(for i in 1 2 3; do [ "$i" != "$fi" ] && echo "$i"; done | head -1)
pub_up() { [ -n "$(pub "$other" "$fi")" ]; }
check "front's published port answers on its own node ($fi)" wait_for 10 pub_up
for i in 1 2 3; do
	[ "$i" = "$fi" ] && continue
	got=$(pub "$fi" "$i")
	check "8080 on node $i, which runs no front task, reaches front ($got)" sh -c "echo '$got' | grep -q '^front-saw-'"
done
check "landing on front's own node keeps the client's address (node $other's $(n_addr "$other"))" \
	[ "$(pub "$other" "$fi")" = "front-saw-$(n_addr "$other")" ]
check "forwarded from another node, front sees that node's gateway (SNAT)" \
	[ "$(pub "$fi" "$other")" = "front-saw-$(gw "$other")" ]

# --- a node dies: its api task leaves tasks.api ------------------------------
# kill the node of an api task that runs neither front nor db (so the asker
# lives)
victim=
for t in $apis; do
	i=${NODE[$t]}
	[ "$i" != "${NODE[$front]}" ] && [ "$i" != "${NODE[$db]}" ] && victim=$t && break
done
[ -z "$victim" ] && for t in $apis; do [ "${NODE[$t]}" != "${NODE[$front]}" ] && victim=$t && break; done
if [ -n "$victim" ]; then
	vi=${NODE[$victim]}
	survivor=$(for t in $apis; do [ "$t" != "$victim" ] && echo "$t"; done)
	dead_seen() { [ "$(g_state_of "${NODE[$front]}" "$(g_id "$vi")")" = dead ]; }
	# the node goes, and its api task's server with it (the test asks
	# front's node from now on)
	ASK=${NODE[$front]}
	"$GOSSIP_CLUSTER" kill "$vi"
	for p in "${HTTPD[@]}"; do
		nsenter_of=$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)
		case $nsenter_of in *"/www/$victim "*) kill "$p" ;; esac
	done
	t0=$(date +%s%3N)
	check "node ${NODE[$front]} (front's) sees node $vi dead" wait_for 30 dead_seen
	t1=$(date +%s%3N)
	# (the owner places a replacement on the node left, which reconciled
	# attaches as soon as it starts: it may join the answer at any time)
	gone() { local a; a=$(q "$front" tasks.api); case " $a " in *" ${ADDR[$victim]} "*) return 1 ;; esac; case " $a " in *" ${ADDR[$survivor]} "*) return 0 ;; esac; return 1; }
	check "within 1 s of that, tasks.api from front no longer has the dead node's task, still the survivor" wait_for 1 gone
	t2=$(date +%s%3N)
	echo "detection $((t1 - t0)) ms, then DNS $((t2 - t1)) ms"
	nft_clean() { ! n_in "${NODE[$front]}" nft list chain inet mts vip_prerouting | grep -q "${ADDR[$victim]}"; }
	check "and the VIP's rule on front's node no longer names it" wait_for 1 nft_clean
	# the replacement serves too once it runs (its page started like the
	# others'), so every sample must be answered by a live task
	replacement() { tasks shop | awk '{print $1}' | grep '^shop_api\.' | grep -v -e "^$victim\$" -e "^$survivor\$" | head -1; }
	rep=
	for k in $(seq 1 60); do rep=$(replacement); [ -n "$rep" ] && break; sleep 0.5; done
	if [ -n "$rep" ]; then
		ri=$(tasks shop | awk -v t="$rep" '$1 == t {print $2}')
		mkdir -p "$T_DIR/www/$rep"
		echo "served-by-$rep" >"$T_DIR/www/$rep/index.html"
		wait_for 10 test -e "$(g_run "$ri")/netd/ns/$rep"
		nsenter --net="$(g_run "$ri")/netd/ns/$rep" busybox httpd -f -p 8080 -h "$T_DIR/www/$rep" &
		HTTPD+=($!)
		sleep 0.5
	fi
	echo "replacement: ${rep:-none}"
	ok=0 bad=0
	for k in $(seq 1 20); do
		r=$(get "$front" "$vip")
		case $r in "served-by-$survivor" | "served-by-${rep:-none}") ok=$((ok + 1)) ;; *) bad=$((bad + 1)) ;; esac
	done
	check "20 sampled connections through the VIP after it: all answered by a live task ($ok ok, $bad not)" [ "$ok" = 20 ]
else
	fail "an api task on a node other than front's"
fi

check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n*/log/init.log"
t_done

#!/usr/bin/env bash
# netd_overlay.sh: mts-netd on 3 nodes, each in its own network namespace joined only by a test bridge (in a namespace of its own), real WireGuard through wireguard-go: forced /24 collisions end distinct, tasks on nodes 1 and 3 reach each other by address over mts0, a capture on the bridge holds only WireGuard UDP and Noise TCP and never the payload's marker, a removed node's peer goes within a second, a netd restart keeps the tasks' addresses and connectivity.
. "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip_all "needs root"
fi
for c in ip tcpdump busybox nsenter wireguard-go; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"
t_tmpdir
chmod o+x "$T_DIR" # the sandboxed agents run as their own uids

# wireguard-go runs as netd's user: /dev/net/tun must be open to it, as
# udev makes it on Debian (0666); some containers ship it 0600.
if [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
	chmod 0666 /dev/net/tun
fi

TAG=$$
HUB=mtsh$TAG            # the namespace of the test bridge
UIDB=${MTS_NETNS_UID:-64700}
WGPORT=51820
GPORT=7946
CTL=$BIN/mtsctl
NODES="1 2 3"

ns() { echo "mtsn$TAG-$1"; }
ndir() { echo "$T_DIR/n$1"; }
uid() { echo $((UIDB + 10 * $1 + $2)); } # node I, 0 group 1 statestore 2 gossipd 3 netd
ctl() { local i=$1; shift; "$CTL" -r "$(ndir "$i")/run" "$@"; }
initpid() { cat "$(ndir "$1")/pid"; }

cleanup() {
	local i
	for i in $NODES; do
		[ -s "$(ndir "$i")/pid" ] && kill -TERM "$(initpid "$i")" 2>/dev/null
	done
	for i in $NODES; do
		[ -s "$(ndir "$i")/pid" ] || continue
		for _ in $(seq 100); do kill -0 "$(initpid "$i")" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$(initpid "$i")" 2>/dev/null
	done
	[ -n "${TCPDUMP:-}" ] && kill "$TCPDUMP" 2>/dev/null
	for i in $NODES; do ip netns del "$(ns "$i")" 2>/dev/null; done
	ip netns del "$HUB" 2>/dev/null
	t_cleanup
}
trap cleanup EXIT

# --- the underlay: a bridge in its own namespace, a veth per node ---------
ip netns add "$HUB"
ip netns exec "$HUB" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$HUB" link add br0 type bridge
ip -n "$HUB" link set br0 up
for i in $NODES; do
	ip netns add "$(ns "$i")"
	ip netns exec "$(ns "$i")" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$(ns "$i")" link set lo up
	ip link add "mtsu$TAG$i" type veth peer name eth0 netns "$(ns "$i")"
	ip link set "mtsu$TAG$i" netns "$HUB"
	ip -n "$HUB" link set "mtsu$TAG$i" master br0 up
	ip -n "$(ns "$i")" addr add "10.99.0.$i/24" dev eth0
	ip -n "$(ns "$i")" link set eth0 up
done
ip netns exec "$HUB" tcpdump -i br0 --immediate-mode -U -w "$T_DIR/bridge.pcap" >"$T_DIR/tcpdump.log" 2>&1 &
TCPDUMP=$!

# --- the nodes -----------------------------------------------------------------
write_conf() { # I
	local i=$1 d; d=$(ndir "$1")
	mkdir -p "$d/log"
	chmod 0755 "$d"
	cat >"$d/mts.conf" <<CONF
[node]
name = n$i
rundir = $d/run
statedir = $d/state

[init]
admin_group = $(uid "$i" 0)

[statestore]
executable = $BIN/mts-statestore
user = $(uid "$i" 1)
seccomp = $TOP/config/seccomp/statestore.policy
log = $d/log/statestore.log
acl_read = 0, $(uid "$i" 2), $(uid "$i" 3)
acl_write = 0, $(uid "$i" 2), $(uid "$i" 3)
acl_merge = 0, $(uid "$i" 2)

[gossipd]
executable = $BIN/mts-gossipd
user = $(uid "$i" 2)
seccomp = $TOP/config/seccomp/gossipd.policy
node_key = yes
after = statestore
log = $d/log/gossipd.log
listen = 10.99.0.$i:$GPORT

[netd]
executable = $BIN/mts-netd
user = $(uid "$i" 3)
capabilities = net_admin, sys_admin
node_key = yes
seccomp = $TOP/config/seccomp/netd.policy
after = statestore gossipd
log = $d/log/netd.log
listen_port = $WGPORT
seccomp_debug = yes
subnet_force = 5
CONF
}

start_node() { # I
	local d; d=$(ndir "$1")
	ip netns exec "$(ns "$1")" setsid "$BIN/mts-init" -c "$d/mts.conf" >>"$d/log/init.log" 2>&1 </dev/null &
	echo $! >"$d/pid"
	wait_for 15 test -S "$d/run/netd/netd.sock"
}

for i in $NODES; do
	write_conf "$i"
	check "node $i starts with netd" start_node "$i" || { tail -20 "$(ndir "$i")"/log/*.log; t_done; }
done

token=$(ctl 1 cluster init --advertise "10.99.0.1:$GPORT") || { fail "cluster init"; t_done; }
for i in 2 3; do
	ctl "$i" cluster join "$token" >/dev/null || fail "node $i joins"
done

# subnet I: node I's /24 ("" until claimed)
subnet() { ctl "$1" -o json overlay status 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["subnet"])'; }
npeers() { ctl "$1" -o json overlay status 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["peers"]))'; }
distinct() { # every node claims a /24, no two the same, and each routes to the 2 others
	local i s seen=" "
	for i in $NODES; do
		s=$(subnet "$i")
		[ -n "$s" ] || return 1
		case $seen in *" $s "*) return 1 ;; esac
		seen="$seen$s "
		[ "$(npeers "$i")" = 2 ] || return 1
	done
}
# Every node started on /24 number 5 (subnet_force): the lowest node id
# keeps it, the two others move.
check "forced /24 collisions end with three distinct subnets, 2 peers each" wait_for 30 distinct
for i in $NODES; do echo "node $i: $(subnet "$i")"; done
n5=0
for i in $NODES; do [ "$(subnet "$i")" = 10.210.5.0/24 ] && n5=$((n5 + 1)); done
check "exactly one node kept 10.210.5.0/24" [ "$n5" = 1 ]
routes() { ctl "$1" -o json overlay status | python3 -c 'import json,sys; print(" ".join(sorted(p["allowed_ips"] for p in json.load(sys.stdin)["peers"])))'; }
check "node 1 routes to nodes 2 and 3 the /24s they claim (read from their n/ records)" \
	[ "$(routes 1)" = "$(printf '%s\n' "$(subnet 2)" "$(subnet 3)" | sort | tr '\n' ' ' | sed 's/ $//')" ]
check "overlay status -o json has the peers' endpoints and /24s" \
	sh -c "'$CTL' -r '$(ndir 1)/run' -o json overlay status | python3 -c '
import json,sys; j=json.load(sys.stdin)
assert j[\"backend\"] == \"wireguard-go\" and j[\"mtu\"] == 1420, j
assert sorted(p[\"endpoint\"] for p in j[\"peers\"]) == [\"10.99.0.2:$WGPORT\", \"10.99.0.3:$WGPORT\"], j
assert all(p[\"allowed_ips\"].endswith(\".0/24\") for p in j[\"peers\"]), j'"

# --- tasks on nodes 1 and 3 ----------------------------------------------------
attach() { # I TASK: prints the address (no /24)
	ctl "$1" -o json overlay attach "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])'
}
# in_task I TASK CMD...: runs CMD in the task's namespace (its file is a
# bind mount in node I's mount namespace)
in_task() {
	local i=$1 t=$2
	shift 2
	nsenter -t "$(initpid "$i")" -m -- nsenter --net="$(ndir "$i")/run/netd/ns/$t" "$@"
}
a1=$(attach 1 web.1) && a3=$(attach 3 db.1) || { fail "attach a task on nodes 1 and 3"; t_done; }
pass "attach a task on nodes 1 and 3 ($a1, $a3)"
check "the task on node 1 pings the task on node 3 over mts0" \
	wait_for 10 in_task 1 web.1 busybox ping -c 1 -W 1 "$a3"
check "and back" in_task 3 db.1 busybox ping -c 1 -W 1 "$a1"

MARKER="mts-plaintext-marker-$TAG"
in_task 3 db.1 busybox nc -l -p 7777 >"$T_DIR/got" 2>/dev/null &
NCPID=$!
sleep 0.3
echo "$MARKER" | in_task 1 web.1 busybox nc -w 2 "$a3" 7777
wait_for 5 grep -q "$MARKER" "$T_DIR/got"
check "a TCP payload goes from the node-1 task to the node-3 task" grep -q "$MARKER" "$T_DIR/got"
kill "$NCPID" 2>/dev/null

# --- what the wire saw -----------------------------------------------------------
sleep 1
kill -INT "$TCPDUMP"
wait "$TCPDUMP" 2>/dev/null
TCPDUMP=
tcpdump -nn -r "$T_DIR/bridge.pcap" 2>/dev/null >"$T_DIR/all.txt"
# between the nodes' addresses: only WireGuard and gossipd's Noise TCP
# (the rest is the nodes' interfaces coming up: IGMP, ARP)
tcpdump -nn -r "$T_DIR/bridge.pcap" "(ip or ip6) and not igmp and not (udp port $WGPORT) and not (tcp port $GPORT)" 2>/dev/null >"$T_DIR/other.txt"
wg=$(tcpdump -nn -r "$T_DIR/bridge.pcap" "udp port $WGPORT" 2>/dev/null | wc -l)
check "the bridge carried WireGuard UDP ($wg packets)" [ "$wg" -gt 4 ]
check "the bridge carried no IP but WireGuard UDP and Noise TCP" [ ! -s "$T_DIR/other.txt" ]
check "no overlay address appears in the clear on the bridge" \
	sh -c "[ -z \"\$(tcpdump -nn -r '$T_DIR/bridge.pcap' net 10.210.0.0/16 2>/dev/null)\" ]"
[ -s "$T_DIR/other.txt" ] && head -5 "$T_DIR/other.txt"
check "the marker never crossed the bridge in plaintext" sh -c "! grep -aq '$MARKER' '$T_DIR/bridge.pcap'"
check "the capture is not empty (tcpdump worked)" [ "$(wc -l <"$T_DIR/all.txt")" -gt 10 ]

# --- netd restarts: same addresses, still connected ------------------------------
netd_pid() { pgrep -u "$(uid "$1" 3)" -f "$BIN/mts-netd" | head -1; }
old=$(netd_pid 1)
kill -KILL "$old"
restarted() { local p; p=$(netd_pid 1); [ -n "$p" ] && [ "$p" != "$old" ] && ctl 1 overlay status >/dev/null; }
check "netd on node 1 is restarted by init" wait_for 10 restarted
check "after the restart web.1 keeps $a1" [ "$(attach 1 web.1)" = "$a1" ]
check "after the restart the tasks still reach each other" \
	wait_for 5 in_task 1 web.1 busybox ping -c 1 -W 1 "$a3"

# --- detach ----------------------------------------------------------------------
ctl 3 overlay detach db.1 >/dev/null
check "a detached task's namespace is gone" sh -c "! nsenter -t $(initpid 3) -m -- test -e '$(ndir 3)/run/netd/ns/db.1'"
check "and its veth" sh -c "! ip -n $(ns 3) link show mtsv${a3##*.} >/dev/null 2>&1"

# --- a removed node's peer goes within a second ---------------------------------
kill -TERM "$(initpid 2)"
for _ in $(seq 100); do kill -0 "$(initpid 2)" 2>/dev/null || break; sleep 0.05; done
: >"$(ndir 2)/pid"
one_peer() { [ "$(npeers 1)" = 1 ] && [ "$(npeers 3)" = 1 ]; }
# dropped_at I: when node I's netd logged its last change to 1 peer (ms
# since midnight, the logs' clock)
dropped_at() {
	grep -h 'wireguard: 1 peers (was 2)' "$(ndir "$1")/log/netd.log" | tail -1 |
		awk '{split($1, t, /[:.]/); print ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000 + t[4]}'
}
t0=$(date +%s%3N)
ctl 1 node rm n2 >/dev/null || fail "node rm n2"
check "nodes 1 and 3 drop the removed node's peer" wait_for 5 one_peer
midnight=$(date -d "$(date +%F)" +%s%3N)
for i in 1 3; do
	at=$(dropped_at "$i")
	ms=$((${at:-999999999} - (t0 - midnight)))
	check "node $i dropped it within a second of node rm (${ms} ms)" [ "$ms" -le 1000 ]
done

check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$T_DIR'/n*/log/init.log"
t_done

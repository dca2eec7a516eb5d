#!/usr/bin/env bash
# netd_overlay.sh: mts-netd on 3 nodes, each in its own network namespace joined only by a test bridge (scripts/cluster MTS_CLUSTER_NETNS=1 MTS_CLUSTER_NETD=1), real WireGuard through wireguard-go: forced /24 collisions end distinct, tasks on nodes 1 and 3 reach each other by address over mts0, tasks of one node reach each other only when they share a network (table inet mts), a capture on the bridge holds only WireGuard UDP and Noise TCP and never the payload's marker, a netd restart keeps the tasks' addresses and connectivity, a removed node's peer goes within a second.
. "$(dirname "$0")/lib.sh"
for c in tcpdump busybox wireguard-go; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"

WGPORT=51820
CTL=$BIN/mtsctl
NODES="1 2 3"
# Every node starts on /24 number 5 (the test hook): the collisions must
# resolve through the replicated n/ records.
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_NETD_CONF="subnet_force = 5\nseccomp_debug = yes"
# Real containers in the attachments when the machine can run them.
SHIM=0
command -v runc >/dev/null && SHIM=1 && export MTS_CLUSTER_SHIM=1

ndir() { echo "$MTS_CLUSTER_DIR/n$1"; }
ctl() { g_ctl "$@"; }
hub() { local ns; ns=$(n_ns 1) && echo "${ns%-n1}-hub"; }

n_up 3 || { cat "$T_DIR/up.log"; fail "3 nodes up in namespaces, each with netd"; t_done; }
pass "3 nodes up in namespaces, each with netd"
TCPDUMP=
stop_capture() { [ -n "$TCPDUMP" ] && kill -INT "$TCPDUMP" 2>/dev/null; wait "$TCPDUMP" 2>/dev/null; TCPDUMP=; }
trap 'stop_capture; n_cleanup' EXIT
nsenter --net="/run/netns/$(hub)" tcpdump -i br0 --immediate-mode -U -w "$T_DIR/bridge.pcap" >"$T_DIR/tcpdump.log" 2>&1 &
TCPDUMP=$!

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
check "forced /24 collisions end with three distinct subnets, 2 peers each" wait_for 30 distinct
for i in $NODES; do echo "node $i: $(subnet "$i")"; done
n5=0
for i in $NODES; do [ "$(subnet "$i")" = 10.210.5.0/24 ] && n5=$((n5 + 1)); done
check "exactly one node kept 10.210.5.0/24" [ "$n5" = 1 ]
routes() { ctl "$1" -o json overlay status | python3 -c 'import json,sys; print(" ".join(sorted(p["allowed_ips"] for p in json.load(sys.stdin)["peers"])))'; }
check "node 1 routes to nodes 2 and 3 the /24s they claim (read from their n/ records)" \
	[ "$(routes 1)" = "$(printf '%s\n' "$(subnet 2)" "$(subnet 3)" | sort | tr '\n' ' ' | sed 's/ $//')" ]
check "overlay status -o json has the peers' endpoints and /24s" \
	sh -c "'$CTL' -r '$(g_run 1)' -o json overlay status | python3 -c '
import json,sys; j=json.load(sys.stdin)
assert j[\"backend\"] == \"wireguard-go\" and j[\"mtu\"] == 1420, j
assert sorted(p[\"endpoint\"] for p in j[\"peers\"]) == [\"$(n_addr 2):$WGPORT\", \"$(n_addr 3):$WGPORT\"], j
assert all(p[\"allowed_ips\"].endswith(\".0/24\") for p in j[\"peers\"]), j'"

# --- tasks on nodes 1 and 3 ----------------------------------------------------
attach() { # I TASK: prints the address (no /24)
	ctl "$1" -o json overlay attach "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])'
}
# in_task I TASK CMD...: runs CMD in the task's namespace
in_task() {
	local i=$1 t=$2
	shift 2
	nsenter --net="$(g_run "$i")/netd/ns/$t" "$@"
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

# --- isolation on one node: only tasks that share a network ---------------------
attachn() { # I TASK NET...: attached on networks NET..., prints the address
	local i=$1 t=$2 n a=()
	shift 2
	for n in "$@"; do a+=(--network "$n"); done
	ctl "$i" -o json overlay attach "${a[@]}" "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])'
}
nping() { in_task 1 "$1" busybox ping -c 1 -W 1 "$2" >/dev/null 2>&1; }
brmac() { n_in 1 ip -o link show mtsbr0 | awk '{for (i = 1; i < NF; i++) if ($i == "link/ether") print $(i + 1)}'; }
mac0=$(brmac)
check "mtsbr0 has the node's own fixed MAC ($mac0), not a port's" sh -c "echo '$mac0' | grep -q '^02:$(g_id 1 | cut -c1-10 | sed 's/../&:/g; s/:$//')\$'"
i1=$(attachn 1 iso-a1 neta) && i2=$(attachn 1 iso-a2 neta shared) && i3=$(attachn 1 iso-b1 netb shared) ||
	fail "attach three tasks on node 1 with networks"
check "two tasks of one network on one node reach each other ($i1 -> $i2)" wait_for 5 nping iso-a1 "$i2"
check "a task does not reach a task of another network on the same node ($i1 -> $i3)" sh -c "! nsenter --net='$(g_run 1)/netd/ns/iso-a1' busybox ping -c 1 -W 1 $i3"
check "two tasks that share their second network reach each other ($i3 -> $i2)" wait_for 5 nping iso-b1 "$i2"
check "a task on a network does not reach an attachment on none ($i1 -> $a1)" sh -c "! nsenter --net='$(g_run 1)/netd/ns/iso-a1' busybox ping -c 1 -W 1 $a1"
check "the drops are counted in table inet mts" sh -c "nsenter --net=/run/netns/$(n_ns 1) nft list chain inet mts isolate | grep -Eq 'counter packets [1-9][0-9]* bytes [0-9]+ drop'"
check "overlay status lists the networks" sh -c "'$CTL' -r '$(g_run 1)' overlay status | grep -Eq '^iso-a2 +$i2/24 +mtsv[0-9]+ +neta,shared '"
ctl 1 overlay attach iso-a2 >/dev/null
check "attach again without --network keeps the task's networks and address" sh -c "'$CTL' -r '$(g_run 1)' overlay status | grep -Eq '^iso-a2 +$i2/24 +mtsv[0-9]+ +neta,shared '"
for t in iso-a1 iso-a2 iso-b1; do ctl 1 overlay detach "$t" >/dev/null; done
check "attaching and detaching tasks leaves mtsbr0's MAC as it was (the others' gateway)" sh -c "[ -n '$mac0' ] && [ '$(brmac)' = '$mac0' ]"

# --- node inspect: the subnet, and this node's WireGuard peer of it -------------
inspect_ok() {
	ctl 1 -o json node inspect n3 | python3 -c '
import json,sys; j=json.load(sys.stdin); w=j["wireguard"]
assert j["subnet"] == sys.argv[1], j
assert w["latest_handshake_ms"] > 0 and w["rx_bytes"] > 0 and w["tx_bytes"] > 0, j' "$(subnet 3)"
}
check "node inspect n3 on node 1: its /24 and the peer's handshake and bytes" inspect_ok
check "node inspect n1 on node 1: its own /24" \
	sh -c "'$CTL' -r '$(g_run 1)' -o json node inspect n1 | grep -q '\"subnet\": \"$(subnet 1)\"'"
check "node inspect's table shows them" \
	sh -c "'$CTL' -r '$(g_run 1)' node inspect n3 | grep -E '^WireGuard: +$(n_addr 3):$WGPORT, handshake [0-9]'"

# --- real containers in netd's namespaces (the shim's --netns) -------------------
if [ "$SHIM" = 1 ]; then
	"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
	for i in 1 3; do ctl "$i" image import "$T_DIR/busybox-oci" >/dev/null || fail "image import on node $i"; done
	c1=$(attach 1 ctr1) && c3=$(attach 3 ctr3) || fail "attach ctr1 and ctr3"
	ctl 3 task run --name ctr3 --netns "$(g_run 3)/netd/ns/ctr3" busybox -- sh -c \
		"mkdir -p /tmp/w && echo '$MARKER-http' >/tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w" >/dev/null ||
		fail "task run ctr3 in its attachment"
	ctl 1 task run --name ctr1 --netns "$(g_run 1)/netd/ns/ctr1" busybox -- sleep 300 >/dev/null ||
		fail "task run ctr1 in its attachment"
	# (busybox's wget crashes on this machine's busybox-static: nc speaks HTTP)
	served() { ctl 1 exec ctr1 -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 $c3 8080" 2>/dev/null | grep -q "$MARKER-http"; }
	check "a container on node 1 fetches a page from a container on node 3 ($c3) over mts0" wait_for 20 served
	check "the container sees the attachment's address as its own" \
		sh -c "'$CTL' -r '$(g_run 1)' exec ctr1 -- ip -4 addr show eth0 | grep -q 'inet $c1/24'"
	for t in "1 ctr1" "3 ctr3"; do set -- $t; ctl "$1" task stop "$2" >/dev/null 2>&1; ctl "$1" task rm "$2" >/dev/null 2>&1; ctl "$1" overlay detach "$2" >/dev/null; done
else
	skip "containers over the overlay (no runc)"
fi

# --- what the wire saw -----------------------------------------------------------
sleep 1
stop_capture
tcpdump -nn -r "$T_DIR/bridge.pcap" 2>/dev/null >"$T_DIR/all.txt"
# IPv4 between the nodes: only WireGuard and gossipd's Noise TCP (IGMP is
# the nodes' interfaces coming up); IPv6: only link-local (ND, MLD)
gports="port $(g_port 1) or port $(g_port 2) or port $(g_port 3)"
tcpdump -nn -r "$T_DIR/bridge.pcap" "(ip and not igmp and not (udp port $WGPORT) and not (tcp and ($gports))) or (ip6 and not src net fe80::/10 and not src host ::)" 2>/dev/null >"$T_DIR/other.txt"
wg=$(tcpdump -nn -r "$T_DIR/bridge.pcap" "udp port $WGPORT" 2>/dev/null | wc -l)
check "the bridge carried WireGuard UDP ($wg packets)" [ "$wg" -gt 4 ]
check "the bridge carried no IP but WireGuard UDP and Noise TCP" [ ! -s "$T_DIR/other.txt" ]
[ -s "$T_DIR/other.txt" ] && head -5 "$T_DIR/other.txt"
check "no overlay address appears in the clear on the bridge" \
	sh -c "[ -z \"\$(tcpdump -nn -r '$T_DIR/bridge.pcap' net 10.210.0.0/16 2>/dev/null)\" ]"
check "the markers (nc payload, HTTP page) never crossed the bridge in plaintext" sh -c "! grep -aq '$MARKER' '$T_DIR/bridge.pcap'"
check "the capture is not empty (tcpdump worked)" [ "$(wc -l <"$T_DIR/all.txt")" -gt 10 ]
# the control: the same marker sent in the clear between the nodes' own
# addresses is found by the same grep
nsenter --net="/run/netns/$(hub)" tcpdump -i br0 --immediate-mode -U -w "$T_DIR/control.pcap" >/dev/null 2>&1 &
TCPDUMP=$!
sleep 0.5
n_in 1 bash -c 'echo "$1" >"/dev/udp/$2/9"' _ "$MARKER" "$(n_addr 3)"
sleep 1
stop_capture
check "control: the marker sent in the clear on the underlay is seen" grep -aq "$MARKER" "$T_DIR/control.pcap"

# --- netd restarts: same addresses, still connected ------------------------------
netd_pid() { pgrep -f "^$BIN/mts-netd -c $(ndir "$1")/mts.conf" | head -1; } # this run's only
old=$(netd_pid 1)
kill -KILL "$old"
restarted() { local p; p=$(netd_pid 1); [ -n "$p" ] && [ "$p" != "$old" ] && ctl 1 overlay status >/dev/null; }
check "netd on node 1 is restarted by init" wait_for 10 restarted
check "after the restart web.1 keeps $a1" [ "$(attach 1 web.1)" = "$a1" ]
check "after the restart the tasks still reach each other" \
	wait_for 5 in_task 1 web.1 busybox ping -c 1 -W 1 "$a3"
# the new netd sets the peers it finds again, and never drops them on
# its way up (a first scan before the first members poll saw no live
# node: every peer removed, and the tasks cut off until new handshakes)
check "the restarted netd removed no WireGuard peer" sh -c "! grep 'netd\[$(netd_pid 1)\]: wireguard: 0 peers' '$(ndir 1)/log/netd.log'"
if ! in_task 1 web.1 busybox ping -c 1 -W 1 "$a3" >/dev/null 2>&1; then
	echo "--- node 1's netd after the restart:"; tail -25 "$(ndir 1)/log/netd.log"
	n_in 1 nft list table inet mts | head -40
	n_in 1 ip route; in_task 1 web.1 ip -4 addr show eth0
	echo "--- web.1's routes, neighbours, its gateway:"; in_task 1 web.1 ip route; in_task 1 web.1 ip neigh
	in_task 1 web.1 busybox ping -c 1 -W 1 "${a1%.*}.1"
	n_in 1 sh -c 'for f in /proc/sys/net/ipv4/conf/mtsbr0/forwarding /proc/sys/net/ipv4/conf/mts0/forwarding /proc/sys/net/ipv4/conf/mtsbr0/proxy_arp_pvlan; do echo "$f $(cat $f)"; done'
	n_in 1 bridge -d link show | grep -E 'mtsv|isolated' | head -6
	for i in 1 3; do
		echo "--- node $i's wireguard-go:"
		python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"get=1\n\n"); print(s.recv(65536).decode())' "$(g_run "$i")/netd/wg/wireguard/mts0.sock" | grep -v private_key
	done
	n_in 1 busybox ping -c 1 -W 1 "$a3"; n_in 3 nft list chain inet mts isolate
	echo "--- processes in node 1's namespace:"
	ip netns pids "$(n_ns 1)" | while read -r p; do echo "$p $(cat /proc/"$p"/comm 2>/dev/null)"; done | sort -k2 | uniq -f1 -c
	grep -h 'wireguard' "$(ndir 1)/log/netd.log" "$(ndir 3)/log/netd.log" | tail -12
fi

# --- wireguard-go dies: netd restarts it, the tasks reach each other again ------
wg_pid() { ip netns pids "$(n_ns 1)" | while read -r p; do [ "$(cat /proc/"$p"/comm 2>/dev/null)" = wireguard-go ] && echo "$p"; done | head -1; }
wg_old=$(wg_pid)
check "node 1 runs one wireguard-go ($wg_old)" [ -n "$wg_old" ]
kill -KILL "$wg_old"
wg_back() { local p; p=$(wg_pid); [ -n "$p" ] && [ "$p" != "$wg_old" ]; }
check "a new wireguard-go runs mts0 on node 1 after the old one was killed" wait_for 15 wg_back
check "and the tasks reach each other again, same addresses" \
	wait_for 10 in_task 1 web.1 busybox ping -c 1 -W 1 "$a3"
check "web.1 still has $a1" [ "$(attach 1 web.1)" = "$a1" ]

# --- detach ----------------------------------------------------------------------
ctl 3 overlay detach db.1 >/dev/null
check "a detached task's namespace is gone" sh -c "! test -e '$(g_run 3)/netd/ns/db.1'"
no_veth() { ! n_in 3 ip link show "mtsv$1" >/dev/null 2>&1; }
check "and its veth" no_veth "${a3##*.}"

# --- a removed node's peer goes within a second ---------------------------------
# killed, then removed at once (before SWIM could call it dead): the
# removal is what drops the peer
"$GOSSIP_CLUSTER" kill 2
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
	check "node $i dropped it within a second of node rm (${ms} ms)" [ "$ms" -ge 0 -a "$ms" -le 1000 ]
done

check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n*/log/init.log"
"$GOSSIP_CLUSTER" down
check "down leaves no task namespace mounted" sh -c "! grep -q ' $MTS_CLUSTER_DIR/' /proc/mounts"
t_done

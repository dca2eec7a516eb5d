#!/usr/bin/env bash
# netd.sh: mts-netd benchmarks on a 2-node cluster in network namespaces (scripts/cluster MTS_CLUSTER_NETNS=1 MTS_CLUSTER_NETD=1) — TCP throughput task to task over mts0 (wireguard-go) next to the same transfer between the nodes over the bare underlay veth, in one run; attach latency, over the first 200 and at 200 (table inet mts changed by set elements when the networks have tasks already, rebuilt when one is new); netd's RSS with 200 attached tasks on 11 networks.
. "$(dirname "$0")/../netns/lib.sh"
for c in wireguard-go busybox; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
MB=${NETD_BENCH_MB:-200}
MANY=${NETD_BENCH_MANY:-200}
export MTS_CLUSTER_NETD=1

n_up 2 || { cat "$T_DIR/up.log"; exit 1; }
npeers() { g_ctl "$1" -o json overlay status 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["peers"]))'; }
both() { [ "$(npeers 1)" = 1 ] && [ "$(npeers 2)" = 1 ]; }
wait_for 30 both || { echo "the overlay did not come up"; exit 1; }
addr() { g_ctl "$1" -o json overlay attach "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])'; }
a1=$(addr 1 src) && a2=$(addr 2 dst) || exit 1
in_task() { local i=$1 t=$2; shift 2; nsenter --net="$(g_run "$i")/netd/ns/$t" "$@"; }

# xfer WHERE-RECV WHERE-SEND ADDR: MB megabytes through one TCP
# connection (python3 at both ends, 256 KiB writes), in MB/s; the receiver
# counts what arrived and a short transfer is an error
RECV='import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5201)); s.listen(1); c,_=s.accept(); n=0
while True:
    b=c.recv(1<<20)
    if not b: break
    n+=len(b)
open(sys.argv[1],"w").write(str(n))'
SEND='import socket,sys
c=socket.create_connection((sys.argv[1], 5201)); z=bytes(1<<18)
for _ in range(int(sys.argv[2])*4): c.sendall(z)
c.close()'
xfer() {
	local recv=$1 send=$2 to=$3 t0 t1 got
	rm -f "$T_DIR/got"
	$recv python3 -c "$RECV" "$T_DIR/got" &
	local rp=$!
	sleep 0.5
	t0=$(date +%s%N)
	$send python3 -c "$SEND" "$to" "$MB"
	wait "$rp"
	t1=$(date +%s%N)
	got=$(cat "$T_DIR/got" 2>/dev/null)
	if [ "$got" != $((MB * 1048576)) ]; then
		echo "short transfer to $to: ${got:-no} bytes" >&2
		echo 0
		return
	fi
	echo "$MB $t0 $t1" | awk '{printf "%.0f", $1 / (($3 - $2) / 1e9)}'
}
in_task 1 src busybox ping -c 3 -W 1 "$a2" >/dev/null # the first handshake
over=$(xfer "in_task 2 dst" "in_task 1 src" "$a2")
bare=$(xfer "n_in 2" "n_in 1" "$(n_addr 2)")

# attach latency and RSS with MANY tasks
pid=$(pgrep -f "^$BIN/mts-netd -c $MTS_CLUSTER_DIR/n1/mts.conf" | head -1)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
idle=$(rss "$pid")
t0=$(date +%s%N)
for i in $(seq 1 "$MANY"); do
	# each on one of 10 networks, a tenth on a second: table inet mts
	# holds a set per network
	nets=(--network "net$((i % 10))")
	[ $((i % 10)) = 0 ] && nets+=(--network shared)
	g_ctl 1 overlay attach "${nets[@]}" "t$i" >/dev/null || { echo "attach t$i failed"; break; }
done
t1=$(date +%s%N)
full=$(rss "$pid")
per=$(((t1 - t0) / 1000000 / MANY))
# the attach at MANY attachments: 20 more on the same networks (each
# changes the sets only), and as many detached again
t2=$(date +%s%N)
for i in $(seq 1 20); do
	g_ctl 1 overlay attach --network "net$((i % 10))" "u$i" >/dev/null || { echo "attach u$i failed"; break; }
done
t3=$(date +%s%N)
for i in $(seq 1 20); do
	g_ctl 1 overlay detach "u$i" >/dev/null || { echo "detach u$i failed"; break; }
done
t4=$(date +%s%N)
at_many=$(((t3 - t2) / 1000000 / 20))
det_many=$(((t4 - t3) / 1000000 / 20))

printf '%-48s %10s\n' "metric" "value"
printf '%-48s %10s\n' "TCP task->task over mts0 (wireguard-go), MB/s" "$over"
printf '%-48s %10s\n' "TCP node->node over the bare underlay, MB/s" "$bare"
printf '%-48s %10s\n' "overlay / underlay" "$(awk -v a="$over" -v b="$bare" 'BEGIN {printf "%.2f", a / b}')"
printf '%-48s %10s\n' "attach (namespace, veth, address), ms each" "$per"
printf '%-48s %10s\n' "attach at $((MANY + 1)) attachments, ms each" "$at_many"
printf '%-48s %10s\n' "detach at $((MANY + 1)) attachments, ms each" "$det_many"
printf '%-48s %10s\n' "netd RSS idle, KiB" "$idle"
printf '%-48s %10s\n' "netd RSS with $((MANY + 1)) attachments, KiB" "$full"
printf '%-48s %10s\n' "table inet mts with them: sets, bytes listed" \
	"$(n_in 1 nft list table inet mts | grep -c '^\s*set ')/$(n_in 1 nft list table inet mts | wc -c)"
echo "(kernel WireGuard: not measured, this machine has no module)"

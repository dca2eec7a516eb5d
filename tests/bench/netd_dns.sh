#!/usr/bin/env bash
# netd_dns.sh: benchmarks of mts-netd's DNS server and VIPs on a 3-node cluster in network namespaces (real wireguard-go, reconciled running the tasks) — TCP connect latency through a service's VIP next to a task's own address, DNS p50/p99 for a service name, and how long after a task starts its name resolves on every node.
. "$(dirname "$0")/../netns/lib.sh"
for c in wireguard-go busybox runc python3; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
N=${NETD_DNS_BENCH_N:-500}
DNSQ=$TOP/tests/netns/dnsq.py
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_SHIM=1
ctl() { g_ctl "$@"; }

n_up 3 || { cat "$T_DIR/up.log"; exit 1; }
wait_for 15 g_all_alive 3 1 2 3 || { echo "the cluster did not form"; exit 1; }
"$TOP/scripts/mkimage" "$T_DIR/bb" >/dev/null
for i in 1 2 3; do ctl "$i" image import "$T_DIR/bb" >/dev/null; done
digests() { local i; for i in 1 2 3; do [ "$(ctl "$i" state ls d/ | tail -n +2 | wc -l)" = 3 ] || return 1; done; }
wait_for 30 digests
cat >"$T_DIR/b.yml" <<'YML'
services:
  client:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy: {mode: global}
  api:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy: {replicas: 2}
YML
ctl 1 deploy -c "$T_DIR/b.yml" --stack b --wait 90 >/dev/null || { echo "deploy failed"; exit 1; }
ids=()
for i in 1 2 3; do ids[$i]=$(cat "$MTS_CLUSTER_DIR/n$i/id"); done
declare -A NODE ADDR GW
while read -r t node; do
	for i in 1 2 3; do [ "${ids[$i]}" = "$node" ] && NODE[$t]=$i; done
done < <(ctl 1 -o json stack ps b | python3 -c '
import json,sys
for t in json.load(sys.stdin):
    if t["state"] == "running": print(t["task"], t["node"])')
# (reconciled had netd attach each task; asked again, netd answers its
# address)
for t in "${!NODE[@]}"; do
	ADDR[$t]=$(ctl "${NODE[$t]}" -o json overlay attach "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])')
done
for i in 1 2 3; do
	GW[$i]=$(ctl "$i" -o json overlay status | python3 -c 'import json,sys; s=json.load(sys.stdin)["subnet"]; print(s.rsplit(".",1)[0]+".1")')
done
in_task() { local t=$1; shift; nsenter --net="$(g_run "${NODE[$t]}")/netd/ns/$t" "$@"; }
clients=$(for t in "${!NODE[@]}"; do case $t in b_client.*) echo "$t" ;; esac; done)
api=$(for t in "${!NODE[@]}"; do case $t in b_api.*) echo "$t" ;; esac; done | head -1)
c1=$(for t in $clients; do [ "${NODE[$t]}" != "${NODE[$api]}" ] && echo "$t"; done | head -1)
vip=$(in_task "$c1" python3 "$DNSQ" "${GW[${NODE[$c1]}]}" api | awk '{print $2}')
[ -n "$vip" ] || { echo "no VIP for api"; exit 1; }

# connect latency: N TCP connects (and closes) from a client on another
# node, through the VIP and to one api task's own address
SERVE='import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7000)); s.listen(128)
while True: s.accept()[0].close()'
PIDS=()
for t in "${!NODE[@]}"; do
	case $t in b_api.*) in_task "$t" python3 -c "$SERVE" & PIDS+=($!) ;; esac
done
trap 'kill "${PIDS[@]}" 2>/dev/null; n_cleanup' EXIT
sleep 1
CONNECT='import socket,sys,time
ms=[]
for _ in range(int(sys.argv[2])):
    t=time.monotonic(); s=socket.create_connection((sys.argv[1], 7000), 3); ms.append((time.monotonic()-t)*1000); s.close()
ms.sort(); print("%.3f %.3f" % (ms[len(ms)//2], ms[int(len(ms)*0.99)]))'
in_task "$c1" python3 -c "$CONNECT" "$vip" 20 >/dev/null # warm (handshakes)
via_vip=$(in_task "$c1" python3 -c "$CONNECT" "$vip" "$N")
direct=$(in_task "$c1" python3 -c "$CONNECT" "${ADDR[$api]}" "$N")
dns=$(in_task "$c1" python3 "$DNSQ" --time "${GW[${NODE[$c1]}]}" api "$N")
dns_tasks=$(in_task "$c1" python3 "$DNSQ" --time "${GW[${NODE[$c1]}]}" tasks.api.b.mts "$N")

# start until resolved: a new service is deployed; clients on all 3 nodes
# poll tasks.late (an A record: its task attached, running, in the
# directory); the time is from the task's started_at (its t/ record) to the
# slowest client's first answer, and from the deploy to it
POLL='import sys,time
sys.path.insert(0, sys.argv[2]); import dnsq
q = dnsq.query("tasks.late", 1, 7)
end = time.time() + 60
while time.time() < end:
    r = dnsq.ask(sys.argv[1], q, 0.5)
    if r is not None and dnsq.parse(r)[3]:
        print(time.time_ns() // 1000000, dnsq.parse(r)[3][0]); sys.exit(0)
    time.sleep(0.005)
print("0 timeout")'
for t in $clients; do
	in_task "$t" python3 -c "$POLL" "${GW[${NODE[$t]}]}" "$TOP/tests/netns" >"$T_DIR/poll.$t" &
done
sleep 1 # the pollers run
printf 'services:\n  late:\n    image: busybox:latest\n    command: ["sleep", "3600"]\n    stop_grace_period: 1s\n' >"$T_DIR/late.yml"
td=$(date +%s%3N)
ctl 1 deploy -c "$T_DIR/late.yml" --stack b --detach >/dev/null
wait_polls() { local t; for t in $clients; do [ -s "$T_DIR/poll.$t" ] || return 1; done; }
wait_for 60 wait_polls
last=$(cat "$T_DIR"/poll.* | sort -n | tail -1 | awk '{print $1}')
late=$(ctl 1 -o json stack ps b | python3 -c '
import json,sys
for t in json.load(sys.stdin):
    if t["task"].startswith("b_late."): print(t["task"], t["node"])' | head -1)
li=; for i in 1 2 3; do [ "${ids[$i]}" = "${late#* }" ] && li=$i; done
started=$(ctl "$li" -o json task inspect "${late%% *}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["started_at"])')
if [ "$last" = 0 ] || [ -z "$started" ]; then
	resolve=timeout deployed=timeout
else
	resolve=$((last - started))
	deployed=$((last - td))
fi
printf '%-52s %16s\n' "metric" "value"
printf '%-52s %16s\n' "TCP connect through the VIP, p50 / p99 ms" "$(echo "$via_vip" | tr ' ' /)"
printf '%-52s %16s\n' "TCP connect to the task's address, p50 / p99 ms" "$(echo "$direct" | tr ' ' /)"
printf '%-52s %16s\n' "DNS 'api' (VIP), p50 / p99 ms ($N queries)" "$(echo "$dns" | tr ' ' /)"
printf '%-52s %16s\n' "DNS 'tasks.api.b.mts', p50 / p99 ms" "$(echo "$dns_tasks" | tr ' ' /)"
printf '%-52s %16s\n' "task start -> its name resolves on all 3 nodes, ms" "$resolve"
printf '%-52s %16s\n' "deploy -> its name resolves on all 3 nodes, ms" "$deployed"
echo "(python3 clients in the tasks' namespaces; the resolve times are the"
echo " slowest of 3 clients, one per node, polling every 5 ms; start is the"
echo " task's started_at, wall clock of the same machine)"

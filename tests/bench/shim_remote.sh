#!/usr/bin/env bash
# shim_remote.sh: round trips of `mtsctl logs` and `mtsctl exec` — on the task's own node and from another node through the gossipd relay (2-node cluster with shims; p50/p90 of 20 whole mtsctl runs each).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/gossip_lib.sh"
N=${SHIM_REMOTE_BENCH_N:-20}
if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
	echo "skipped (needs root and runc)"
	exit 0
fi
t_tmpdir
trap 'g_down; t_cleanup' EXIT
export MTS_CLUSTER_SHIM=1
g_up 2 || { echo "cluster did not start"; exit 1; }
wait_for 10 g_all_alive 2 1 2 || exit 1
"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
g_ctl 1 image import "$T_DIR/busybox-oci" >/dev/null || exit 1
g_ctl 1 task run --name b busybox -- sh -c 'seq 1 100; exec sleep 3600' >/dev/null || exit 1
wait_for 10 bash -c "'$BIN/mtsctl' -r '$(g_run 2)' logs b | grep -qx 100" || exit 1

# time_runs FILE NODE ARGS...: N runs of mtsctl on NODE, ms each.
time_runs() {
	local f=$1 node=$2 i t0 t1
	shift 2
	: >"$f"
	for i in $(seq 1 "$N"); do
		t0=$(date +%s%N)
		g_ctl "$node" "$@" >/dev/null || return 1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000)) >>"$f"
	done
}
pct() { sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p+0.5); if (i<1) i=1; printf "%.1f", a[i]/1000}'; }

printf '%-44s %10s %10s\n' "mtsctl run (ms, n=$N)" "p50" "p90"
row() { # LABEL NODE ARGS...
	local label=$1
	shift
	time_runs "$T_DIR/t" "$@" || { echo "$label: failed"; return; }
	printf '%-44s %10s %10s\n' "$label" "$(pct "$T_DIR/t" 0.5)" "$(pct "$T_DIR/t" 0.9)"
}
row "task ls on the task's node (baseline)" 1 task ls
row "logs, on the task's node" 1 logs b
row "logs, from node 2 (relay)" 2 logs b
row "logs --tail 1, from node 2 (relay)" 2 logs --tail 1 b
row "exec true, on the task's node" 1 exec b -- true
row "exec true, from node 2 (relay)" 2 exec b -- true
row "exec true --node n1, from node 2 (relay)" 2 exec --node n1 b -- true

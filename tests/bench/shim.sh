#!/usr/bin/env bash
# shim.sh: mts-shim benchmarks — task start latency (p50 of 20, request to running process) next to bare `runc run --detach` of the same bundle, interleaved; shim RSS with 50 running containers.
. "$(dirname "$0")/../integration/lib_shim.bash"
N=${SHIM_BENCH_N:-20}
MANY=${SHIM_BENCH_MANY:-50}
CLIENT=$BUILD/tests/shim-bench-client
shim_setup
shim_start
$CTL image import "$T_DIR/busybox-oci" >/dev/null || { echo "import failed"; exit 1; }
RUNC=$(command -v runc)
BARE_ROOT=$RUN/runc2
mkdir -p "$BARE_ROOT"

# Warm up both paths once (page cache, cgroup parents).
$CLIENT start "$RUN" busybox 1 warm >/dev/null || exit 1
BUNDLE=$STATE/shim/tasks/warm0/bundle
$CLIENT bare "$RUNC" "$BARE_ROOT" "$BUNDLE" 1 "$CGP" barewarm >/dev/null || exit 1

: >"$T_DIR/shim.ms"
: >"$T_DIR/bare.ms"
for i in $(seq 1 "$N"); do
	$CLIENT start "$RUN" busybox 1 "lat$i-" >>"$T_DIR/shim.ms" || exit 1
	$CLIENT bare "$RUNC" "$BARE_ROOT" "$BUNDLE" 1 "$CGP" "bare$i-" >>"$T_DIR/bare.ms" || exit 1
done
p50() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
p90() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int(NR*0.9+0.5)]}'; }
s50=$(p50 "$T_DIR/shim.ms")
b50=$(p50 "$T_DIR/bare.ms")
s90=$(p90 "$T_DIR/shim.ms")
b90=$(p90 "$T_DIR/bare.ms")
for id in $(ls "$BARE_ROOT"); do runc --root "$BARE_ROOT" delete -f "$id" >/dev/null 2>&1; done
$CLIENT clean "$RUN" >/dev/null
wait_for 60 bash -c "test -z \"\$(ls $RUN/runc)\""

# RSS of the shim (and, separately, of the per-container monitors).
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
idle=$(rss "$SHIM_PID")
$CLIENT start "$RUN" busybox "$MANY" many >/dev/null || exit 1
running=$($CTL task ls | grep -c running)
$CTL task ls >/dev/null
busy=$(rss "$SHIM_PID")
mons=0
for m in "$STATE"/shim/tasks/*/monitor.pid; do
	p=$(cat "$m")
	r=$(rss "$p" 2>/dev/null)
	mons=$((mons + ${r:-0}))
done
$CLIENT clean "$RUN" >/dev/null
wait_for 120 bash -c "test -z \"\$(ls $RUN/runc)\""

printf '%-44s %10s %10s\n' "metric" "value" "target"
printf '%-44s %10s %10s\n' "start latency p50, shim (ms, n=$N)" "$s50" ""
printf '%-44s %10s %10s\n' "start latency p50, bare runc run -d (ms)" "$b50" ""
printf '%-44s %10s %10s\n' "start latency p90, shim / bare (ms)" "$s90 / $b90" ""
printf '%-44s %10s %10s\n' "p50 ratio shim / bare" "$(awk -v a="$s50" -v b="$b50" 'BEGIN {printf "%.2f", a / b}')" "< 1.2"
printf '%-44s %10s %10s\n' "shim RSS idle (KiB)" "$idle" ""
printf '%-44s %10s %10s\n' "shim RSS, $running running containers (KiB)" "$busy" "< 10240"
printf '%-44s %10s %10s\n' "monitors' RSS per container (KiB)" "$((mons / (running > 0 ? running : 1)))" ""

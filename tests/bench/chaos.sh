#!/usr/bin/env bash
# tests/bench/chaos.sh: the full chaos test (tests/netns/recon_chaos.sh with 180 s of faults, CHAOS_SECS) — its seed, how long the quiet took to reach every service's count and equal MST roots, and its verdict; CHAOS_SEED replays a run.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
row() { printf '%-52s %10s %s\n' "$1" "$2" "$3"; }
out=$(mktemp /tmp/mts-bench-chaos.XXXXXX)
trap 'rm -f "$out"' EXIT
CHAOS_SECS=${CHAOS_SECS:-180} "$TOP/tests/netns/recon_chaos.sh" >"$out" 2>&1
rc=$?
if grep -q '^SKIP: ' "$out"; then
	grep '^SKIP: ' "$out"
	exit 0
fi
seed=$(sed -n 's/^chaos seed \([0-9]*\): .* faults.*/\1/p' "$out" | head -1)
line=$(grep '^chaos seed .*: quiet to' "$out" | tail -1)
tx=$(echo "$line" | sed -n 's/.*exact counts \([0-9-]*\) ms.*/\1/p')
tr=$(echo "$line" | sed -n 's/.*equal roots \([0-9-]*\) ms.*/\1/p')
echo "chaos: 5 nodes (netns), 3 services, ${CHAOS_SECS:-180} s of kills, restarts and link cuts"
row "seed (CHAOS_SEED=$seed replays it)" "$seed" ""
row "faults in the schedule" "$(grep -c '^  plan: ' "$out")" ""
row "quiet to every service at its count" "${tx:--}" ms
row "quiet to equal MST roots" "${tr:--}" ms
row "checks passed / failed" "$(grep -c '^PASS: ' "$out") / $(grep -c '^FAIL: ' "$out")" ""
if [ $rc -ne 0 ]; then
	grep -E '^FAIL: ' "$out" | sed 's/^/  /'
	exit 1
fi

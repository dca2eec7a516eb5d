#!/usr/bin/env bash
# tests/bench/rollout.sh: a rolling update of 30 replicas with parallelism 5 on a 3-node cluster with real containers and health checks — the time from `service update` to all 30 healthy on the new image with the update completed, and the lowest healthy count seen (service ps sampled every 200 ms); median of ROLLOUT_BENCH_ROUNDS (3) updates back and forth.
#
#   ROLLOUT_BENCH_REPLICAS (30), ROLLOUT_BENCH_PARALLELISM (5),
#   ROLLOUT_BENCH_MONITOR (2s): update_config's monitor, ROLLOUT_BENCH_ROUNDS (3)
set -u
. "$(dirname "$0")/../integration/lib_sched.bash" >/dev/null
N=${ROLLOUT_BENCH_REPLICAS:-30}
P=${ROLLOUT_BENCH_PARALLELISM:-5}
MON=${ROLLOUT_BENCH_MONITOR:-2s}
ROUNDS=${ROLLOUT_BENCH_ROUNDS:-3}

row() { printf '%-60s %12s\n' "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }

s_up 3 >/dev/null # it ends the bench (exit 1) when a step fails
s_import busybox:v2 >/dev/null
s_stack web "services:
  web:
    image: busybox:latest
    command: [\"sleep\", \"3600\"]
    stop_grace_period: 1s
    healthcheck:
      test: [\"CMD\", \"true\"]
      interval: 1s
      timeout: 5s
      retries: 3
    deploy:
      replicas: $N
      update_config: {parallelism: $P, monitor: $MON, order: stop-first}"

# all_on IMAGE: N healthy tasks of the record's spec, the update over
all_on() {
	s_ps 1 w_web | jf "len([t for t in j if t['desired_state'] == 'running']) == $N and all(t['current'] and t['state'] == 'running' and t['health'] == 'healthy' for t in j if t['desired_state'] == 'running')" &&
		[ "$(g_ctl 1 service inspect w_web | jp 'j.get("update_status", {}).get("state", "")')" = completed ]
}
g_ctl 1 deploy -c web.yml --stack w --wait 120 >/dev/null || { echo "deploy of $N did not converge"; exit 1; }
wait_for 60 bash -c "$GOSSIP_CLUSTER ctl 1 -o json service ps w_web | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if sum(t[\"health\"] == \"healthy\" for t in j) == $N else 1)'" ||
	{ echo "$N not healthy after the deploy"; exit 1; }

T=() L=()
img=busybox:latest
for r in $(seq 1 "$ROUNDS"); do
	[ "$img" = busybox:latest ] && img=busybox:v2 || img=busybox:latest
	rm -f "samples$r" "samples$r.stop"
	s_sampler 1 w_web "samples$r"
	sleep 0.5
	t0=$(date +%s%3N)
	g_ctl 2 service update w_web --image "$img" >/dev/null
	while ! all_on; do
		[ $(($(date +%s%3N) - t0)) -gt 300000 ] && { echo "round $r: not done after 300 s"; exit 1; }
		sleep 0.1
	done
	t1=$(date +%s%3N)
	read -r ns lowh _ <<<"$(s_sampler_stop "samples$r")"
	T+=($((t1 - t0)))
	L+=("$lowh")
	echo "   round $r to $img: $(secs $((t1 - t0))) s, lowest healthy $lowh of $N ($ns samples)"
done
batches=$(g_ctl 1 service inspect w_web | jp 'j["update_status"]["batches"]')
lowest=$(printf '%s\n' "${L[@]}" | sort -n | head -1)
row "rolling update of $N, parallelism $P, monitor $MON ($batches batches), median of $ROUNDS" "$(secs "$(median "${T[@]}")") s"
row "lowest healthy seen in any round (floor: $N - $P = $((N - P)))" "$lowest"
g_ctl 1 service rm w_web >/dev/null
exit 0

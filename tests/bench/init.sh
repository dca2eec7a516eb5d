#!/usr/bin/env bash
# init.sh: benchmark of mts-init — time from start to all agents ready, RSS of init and of each idle agent.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/lib_init.bash"
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 0; }
t_tmpdir
it_conf
N=${N:-6}
prev=
for i in $(seq 1 "$N"); do
	{
		echo "[a$i]"
		echo "executable = $TA"
		echo "user = $((64150 + i))"
		echo "args = -s a$i.sock"
		echo "seccomp = $POLICY"
		# half of them in a dependency chain, so ordering is measured too
		if [ $((i % 2)) = 0 ] && [ -n "$prev" ]; then echo "after = $prev"; fi
		echo
	} >>"$T_DIR/mts.conf"
	prev=a$i
done
if [ -x "$BIN/mts-statestore" ]; then
	printf '[statestore]\nexecutable = %s\nuser = 64170\nseccomp = %s\n' \
	    "$BIN/mts-statestore" "$TOP/config/seccomp/statestore.policy" >>"$T_DIR/mts.conf"
	N=$((N + 1))
fi
t0=$(date +%s%N)
it_start
wait_for 20 it_all_up || { echo "agents did not come up"; cat "$T_DIR/init.log"; exit 1; }
wall=$((($(date +%s%N) - t0) / 1000000))
own=$(sed -n 's/.*node ready: [0-9]* agents up in \([0-9]*\) ms/\1/p' "$T_DIR/init.log")
sleep 1 # idle
# VmRSS counts shared library pages (libc alone is ~1.5 MiB resident in
# every process); RssAnon is the process's own memory; Pss splits the
# shared pages among the processes that map them.
mem() {
	local rss anon pss
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status")
	anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$1/status")
	pss=$(awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup")
	printf '%6s %6s %6s' "$rss" "$anon" "$pss"
}
printf '%-34s %10s\n' "metric" "value"
printf '%-34s %10s\n' "agents" "$N"
printf '%-34s %8s ms\n' "start to all ready (init's clock)" "$own"
printf '%-34s %8s ms\n' "start to all ready (mtsctl sees)" "$wall"
printf '%-34s %s\n' "memory, KiB (idle)" "   RSS   anon    PSS"
printf '%-34s %s  (target: < 2048)\n' "  mts-init" "$(mem "$INIT_PID")"
$CTL agent ls | awk 'NR > 1 {print $1, $3}' | while read -r name pid; do
	printf '%-34s %s\n' "  $name" "$(mem "$pid")"
done
t0=$(date +%s%N)
it_stop
printf '%-34s %8s ms\n' "SIGTERM to all stopped" "$((($(date +%s%N) - t0) / 1000000))"

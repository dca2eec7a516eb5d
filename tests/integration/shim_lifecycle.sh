#!/usr/bin/env bash
# shim_lifecycle.sh: stop with a grace period (timed), on-failure restarts with growing delays until failed, HTTP health checks turning healthy then unhealthy.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
shim_start
$CTL image import "$T_DIR/busybox-oci" >/dev/null

ms() { date +%s%3N; }

# A task ignoring SIGTERM (pid 1 without a handler) is killed at the grace.
$CTL task run --name stubborn --stop-grace 1500ms busybox -- sleep 1000 >/dev/null
# A task that exits on SIGTERM stops at once.
$CTL task run --name polite busybox -- sh -c 'trap "exit 0" TERM; while :; do sleep 0.05; done' >/dev/null
check "both run" bash -c "$CTL task ls | grep -q 'stubborn.*running' && $CTL task ls | grep -q 'polite.*running'"
t0=$(ms)
out=$($CTL task stop stubborn)
t1=$(ms)
echo "stubborn stopped after $((t1 - t0)) ms: $out"
check "SIGTERM-ignoring task waits the grace (>= 1.5 s)" test $((t1 - t0)) -ge 1500
check "then is killed (well before 10 s)" test $((t1 - t0)) -lt 10000
check "stopped by SIGKILL" task_is stubborn signal 9
check "desired state is stopped" task_is stubborn desired stopped
t0=$(ms)
$CTL task stop polite >/dev/null
t1=$(ms)
echo "polite stopped after $((t1 - t0)) ms"
check "task exiting on SIGTERM stops promptly (< 1.5 s)" test $((t1 - t0)) -lt 1500
check "with its own exit code 0" task_is polite exit_code 0
t0=$(ms)
$CTL task run --name quick --stop-grace 30s busybox -- sleep 1000 >/dev/null
$CTL task stop --grace 300ms quick >/dev/null
t1=$(ms)
check "--grace overrides the task's grace" test $((t1 - t0)) -lt 5000

# on-failure:3 restarts with growing delays (200, 400, 800 ms), then fails.
# Each start prints the kernel's uptime (shared clock, 10 ms resolution).
$CTL task run --name crash --restart on-failure:3 --restart-delay 200ms busybox -- \
	sh -c 'cut -d" " -f1 /proc/uptime; exit 2' >/dev/null
check "crashing task ends failed" wait_for 20 task_is crash state failed
check "after 3 restarts" task_is crash restarts 3
check "last exit code recorded" task_is crash exit_code 2
mapfile -t starts < <($CTL logs crash)
check "4 starts logged" test ${#starts[@]} -eq 4
gaps=$(python3 -c '
import sys
s=[float(x) for x in sys.argv[1:]]
print(" ".join(str(int(round((b-a)*1000))) for a,b in zip(s,s[1:])))' "${starts[@]}")
echo "gaps between starts (ms): $gaps"
read -r g1 g2 g3 <<<"$gaps"
delays=$(grep -o 'task crash: restart [0-9]* in [0-9]* ms' "$T_DIR/shim.log" | awk '{print $6}' | tr '\n' ' ')
echo "restart delays the shim chose (ms): $delays"
check "delays double: 200 400 800" test "$delays" = "200 400 800 "
check "first restart waited its delay" test "${g1:-0}" -ge 200
check "second restart waited its delay" test "${g2:-0}" -ge 400
check "third restart waited its delay" test "${g3:-0}" -ge 800
check "gaps grow overall" test "${g3:-0}" -gt "${g1:-0}"
$CTL task run --name fine --restart on-failure:3 --restart-delay 100ms busybox -- true >/dev/null
check "on-failure does not restart a clean exit" wait_for 10 task_is fine state exited
check "no restarts for it" task_is fine restarts 0
$CTL task run --name always --restart any:2 --restart-delay 100ms busybox -- true >/dev/null
check "restart any restarts clean exits up to its limit" wait_for 10 task_is always restarts 2
check "then settles exited" wait_for 10 task_is always state exited

# HTTP health against busybox httpd: healthy, then unhealthy once httpd dies.
$CTL task run --name web --health-http http://127.0.0.1:8080/ --health-interval 300ms \
	--health-timeout 2s --health-retries 2 busybox -- \
	sh -c 'httpd -p 8080 -h /var/www; while :; do sleep 1; done' >/dev/null
check "health starts as starting or healthy" bash -c "$CTL task inspect web | grep -qE '^health: *(starting|healthy)'"
check "web turns healthy" wait_for 15 task_is web health healthy
check "health output shows the HTTP status" bash -c "$CTL task inspect web | grep -q 'HTTP/1.[01] 200'"
$CTL exec web -- killall httpd >/dev/null
t0=$(ms)
check "web turns unhealthy after httpd dies" wait_for 15 task_is web health unhealthy
t1=$(ms)
echo "unhealthy after $((t1 - t0)) ms"
check "not before the retries (2 x 300 ms)" test $((t1 - t0)) -ge 300
check "still running while unhealthy" task_is web state running
$CTL task run --name tcp --health-tcp 9 --health-interval 200ms --health-retries 1 busybox -- sleep 1000 >/dev/null
check "TCP probe to a closed port is unhealthy" wait_for 15 task_is tcp health unhealthy
$CTL task run --name cmd --health-cmd 'test -e /tmp/ok' --health-interval 200ms --health-retries 1 busybox -- sh -c 'sleep 1; touch /tmp/ok; sleep 1000' >/dev/null
check "exec probe turns healthy when its check passes" wait_for 15 task_is cmd health healthy

for t in web tcp cmd; do $CTL task rm -f "$t"; done
for t in stubborn polite quick crash fine always; do $CTL task rm "$t"; done
check "all removed" wait_for 10 bash -c "test \$($CTL task ls | tail -n +2 | wc -l) -eq 0"
t_done

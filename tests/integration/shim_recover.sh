#!/usr/bin/env bash
# shim_recover.sh: SIGKILL the shim with 5 containers running — they keep running, the restarted shim reports them (and one that exited meanwhile, with its exit code), keeps logging, and deletes containers it does not own.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
shim_start
$CTL image import "$T_DIR/busybox-oci" >/dev/null

for i in 1 2 3 4; do
	$CTL task run --name keep$i busybox -- sh -c 'i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.2; done' >/dev/null
done
# The fifth waits for a file we create while the shim is down, then exits 7.
$CTL task run --name leaver busybox -- sh -c 'while ! test -e /go; do sleep 0.1; done; echo leaving; exit 7' >/dev/null
check "5 tasks running" test "$($CTL task ls | grep -c running)" -eq 5
declare -A pid
for t in keep1 keep2 keep3 keep4 leaver; do pid[$t]=$(task_field "$t" pid); done

shim_kill9
check "shim is gone" bash -c "! kill -0 $SHIM_PID 2>/dev/null"
for t in keep1 keep2 keep3 keep4 leaver; do
	check "$t still runs without the shim" kill -0 "${pid[$t]}"
done
touch "$STATE/shim/tasks/leaver/bundle/rootfs/go"
check "leaver exits while the shim is down" wait_for 10 bash -c "! kill -0 ${pid[leaver]} 2>/dev/null"
# A container in the shim's runtime root that no task owns.
mkdir -p "$T_DIR/orphan/rootfs"
cp -a "$STATE/shim/tasks/keep1/bundle/config.json" "$T_DIR/orphan/"
mount --bind "$STATE/shim/tasks/keep1/bundle/rootfs" "$T_DIR/orphan/rootfs"
sed -i "s|$CGP/keep1|$CGP/orphan|" "$T_DIR/orphan/config.json"
runc --root "$RUN/runc" run -d --bundle "$T_DIR/orphan" orphan </dev/null >/dev/null 2>&1
check "orphan container runs" bash -c "runc --root $RUN/runc list | grep -q '^orphan .*running'"
before=$($CTL logs keep1 2>/dev/null | wc -l)

shim_start
for t in keep1 keep2 keep3 keep4; do
	check "$t reported running after restart" task_is "$t" state running
	check "$t has the same pid" task_is "$t" pid "${pid[$t]}"
done
check "leaver reported exited" wait_for 10 task_is leaver state exited
check "with exit code 7" task_is leaver exit_code 7
check "its last output is in its log" bash -c "$CTL logs leaver | grep -qx leaving"
check "orphan container deleted" wait_for 10 bash -c "! runc --root $RUN/runc list | grep -q '^orphan '"
umount "$T_DIR/orphan/rootfs"
check "logs keep growing after the restart" wait_for 10 bash -c "test \$($CTL logs keep1 | wc -l) -gt $((before + 3))"
$CTL exec keep2 -- true
check "exec works on a re-attached task" test $? -eq 0

# Exit detection still works for re-attached tasks.
$CTL task stop --grace 0s keep3 >/dev/null
check "stop of a re-attached task" task_is keep3 state exited
kill -9 "${pid[keep4]}"
check "a re-attached task's death is seen" wait_for 10 task_is keep4 state exited
check "as a SIGKILL" task_is keep4 signal 9

# Second restart with nothing changed: still consistent.
shim_kill9
shim_start
check "keep1 running after a second restart" task_is keep1 state running
check "keep3 still exited" task_is keep3 state exited
for t in keep1 keep2 keep3 keep4 leaver; do $CTL task rm -f "$t"; done
check "all removed" wait_for 10 bash -c "test \$($CTL task ls | tail -n +2 | wc -l) -eq 0"
check "no container left" wait_for 10 bash -c "test -z \"\$(ls $RUN/runc)\""
t_done

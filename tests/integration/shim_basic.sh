#!/usr/bin/env bash
# shim_basic.sh: real busybox containers through mts-shim and runc — exit codes and logs, namespaces, default capabilities, read-only rootfs, OOM kills, exec, removal.
. "$(dirname "$0")/lib_shim.bash"
shim_setup "log_max_size = 16K
log_max_files = 2"
shim_start

out=$($CTL image import "$T_DIR/busybox-oci" 2>&1)
check "import names the image busybox:latest" grep -q '^busybox:latest sha256:' <<<"$out"
check "image ls lists it" bash -c "$CTL image ls | grep -q '^busybox:latest'"

# Tasks without --name get an id from the shim, twice in a row, and the
# shim stays up (the generated id used to free protobuf-c's static empty
# string: SEGV, and mtsctl's resends crashed the restarted shim).
ids=
for i in 1 2; do
	id=$($CTL task run busybox -- sh -c 'exit 3' 2>"$T_DIR/err")
	check "unnamed task $i gets an id ($id)" grep -qE '^[0-9a-f]{16}$' <<<"$id" ||
		cat "$T_DIR/err"
	ids="$ids $id"
done
check "the shim survived the unnamed runs" kill -0 "$SHIM_PID"
for id in $ids; do
	check "unnamed task $id exits 3" wait_for 10 task_is "$id" exit_code 3
	$CTL task rm "$id"
done

# A task that prints and exits 3.
$CTL task run --name exit3 busybox -- sh -c 'echo out-line; echo err-line >&2; exit 3' >/dev/null
check "task exits" wait_for 10 task_is exit3 state exited
check "inspect shows exit code 3" task_is exit3 exit_code 3
check "inspect text shows exit code 3" bash -c "$CTL task inspect exit3 | grep -q '^exit code: *3$'"
logs=$($CTL logs exit3)
check "logs show stdout" grep -qx out-line <<<"$logs"
check "logs show stderr" grep -qx err-line <<<"$logs"
check "logs --tail 1 shows the last line" test "$($CTL logs --tail 1 exit3)" = err-line

# Log rotation: 200 lines of ~1 KiB through 16 KiB segments, 2 kept.
$CTL task run --name chatty busybox -- sh -c 'i=0; while [ $i -lt 200 ]; do printf "line %03d %01000d\n" $i 0; i=$((i+1)); done' >/dev/null
wait_for 10 task_is chatty state exited
segs=$(ls "$STATE/shim/tasks/chatty/logs" | wc -l)
check "log rotated into at most 2 segments ($segs)" test "$segs" -le 2 -a "$segs" -ge 1
clog=$($CTL logs chatty | cut -c1-8)
check "the newest line is kept" test "$(tail -1 <<<"$clog")" = "line 199"
check "the oldest lines were rotated away" bash -c "! grep -q 'line 000' <<<'$clog'"
# (The first kept line may be the tail of one cut by the rotation.)
check "what is kept is contiguous up to the end" python3 -c '
import sys
n=[int(l[5:8]) for l in sys.stdin.read().split("\n") if l.startswith("line ")]
sys.exit(0 if len(n) > 5 and n == list(range(n[0], 200)) else 1)' <<<"$clog"
check "--tail 3 across segments" test "$($CTL logs --tail 3 chatty | cut -c1-8 | tr '\n' ' ')" = "line 197 line 198 line 199 "
$CTL task rm chatty

# Namespaces and capabilities, from inside.
$CTL task run --name probe busybox -- sh -c '
	grep -E "^(CapEff|CapPrm|CapBnd|CapInh|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status
	for n in pid mnt uts ipc net; do echo "ns $n $(readlink /proc/self/ns/$n)"; done
	echo "host $(hostname)"' >/dev/null
wait_for 10 task_is probe state exited
plog=$($CTL logs probe)
check "effective caps are Docker's default set" grep -qP '^CapEff:\s+00000000a80425fb$' <<<"$plog"
check "bounding caps are Docker's default set" grep -qP '^CapBnd:\s+00000000a80425fb$' <<<"$plog"
check "no inheritable or ambient caps" bash -c "grep -qP '^CapInh:\s+0+$' <<<'$plog' && grep -qP '^CapAmb:\s+0+$' <<<'$plog'"
check "no_new_privs is set" grep -qP '^NoNewPrivs:\s+1$' <<<"$plog"
check "a seccomp filter is on" grep -qP '^Seccomp:\s+2$' <<<"$plog"
for n in pid mnt uts ipc net; do
	inside=$(awk -v n="$n" '$1=="ns" && $2==n {print $3}' <<<"$plog")
	check "own $n namespace" test -n "$inside" -a "$inside" != "$(readlink /proc/self/ns/$n)"
done
check "hostname is the task id" grep -qx 'host probe' <<<"$plog"

# Read-only root file system.
$CTL task run --name ro --read-only busybox -- sh -c 'if echo x >/written; then echo WROTE; else echo REFUSED; fi' >/dev/null
wait_for 10 task_is ro state exited
check "read-only rootfs refuses writes" bash -c "$CTL logs ro | grep -qx REFUSED"
$CTL task run --name rw busybox -- sh -c 'echo x >/written && echo WROTE' >/dev/null
wait_for 10 task_is rw state exited
check "writable rootfs by default" bash -c "$CTL logs rw | grep -qx WROTE"

# Memory limit: killed by the OOM killer, and recorded.
$CTL task run --name oom -m 24M busybox -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived' >/dev/null
check "oom task ends" wait_for 20 task_is oom state exited
check "OOM kill recorded" task_is oom oom_killed true
check "killed by SIGKILL" task_is oom signal 9
check "it did not survive" bash -c "! $CTL logs oom | grep -q survived"

# Pids: every task has a limit, the node's default_pids_limit (4096)
# unless it sets one; a fork bomb stops at it.
bundle_pids() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["linux"]["resources"].get("pids", {}).get("limit", "none"))' "$STATE/shim/tasks/$1/bundle/config.json"; }
$CTL task run --name pdef busybox -- sleep 1000 >/dev/null
check "default pids limit in config.json ($(bundle_pids pdef))" test "$(bundle_pids pdef)" = 4096
check "and in the task's cgroup" test "$(cat /sys/fs/cgroup/pids/${CGP#/}/pdef/pids.max 2>/dev/null)" = 4096
$CTL task rm -f pdef
$CTL task run --name pmax --pids-limit max busybox -- true >/dev/null
check "--pids-limit max: none ($(bundle_pids pmax))" test "$(bundle_pids pmax)" = none
# (ash exits at its first failed fork: the inner shell forks until then,
# the outer one, pid 1, kills what it left and counts.)
$CTL task run --name bomb --pids-limit 25 busybox -- sh -c '
	sh -c "i=0; while [ \$i -lt 100 ]; do sleep 30 & echo \$! >>/tmp/started; i=\$((i + 1)); done" 2>/dev/null
	kill -9 -1; echo "started $(wc -l </tmp/started)"' >/dev/null
check "override in config.json" test "$(bundle_pids bomb)" = 25
check "a fork bomb stops at the limit" wait_for 20 bash -c "$CTL logs bomb | grep -qE '^started (1[0-9]|2[0-4])$'"
echo "  $($CTL logs bomb)"
$CTL task rm -f bomb
$CTL task rm -f pmax

# exec: output and exit code.
$CTL task run --name live busybox -- sleep 1000 >/dev/null
check "live task runs" task_is live state running
check "task ls: a running task's EXIT is -, not -1" bash -c "$CTL task ls | grep -q '^live  *busybox  *running  *-  '"
check "task inspect: exit code -" bash -c "$CTL task inspect live | grep -q '^exit code: *-$'"
check "-o json keeps exit_code -1" bash -c "$CTL -o json task inspect live | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[\"exit_code\"] == -1 else 1)'"
out=$($CTL exec live -- sh -c 'echo from-exec; hostname; exit 5')
rc=$?
check "exec returns the command's exit code" test $rc -eq 5
check "exec prints the output" grep -qx from-exec <<<"$out"
check "exec runs in the task's uts namespace" grep -qx live <<<"$out"
$CTL exec exit3 -- true 2>"$T_DIR/err"
check "exec into an exited task is refused" grep -q 'not running' "$T_DIR/err"

# An exec whose client stops reading: the session's buffer fills, the
# process ends with the rest of its output still in the pipe, and the
# shim waits idle (the paused pipe's hang-up does not spin its loop); the
# output then arrives whole.
$CTL exec live -- sh -c 'sleep 1; head -c 300000 /dev/zero' >"$T_DIR/big" &
cpid=$!
sleep 0.4
kill -STOP "$cpid"
sleep 1.5
cpu0=$(awk '{print $14 + $15}' "/proc/$SHIM_PID/stat")
sleep 2
cpu1=$(awk '{print $14 + $15}' "/proc/$SHIM_PID/stat")
check "a full exec session with its process ended leaves the shim idle ($((cpu1 - cpu0)) ticks in 2 s)" \
	test $((cpu1 - cpu0)) -le 10
kill -CONT "$cpid"
wait "$cpid"
check "its output then arrives whole" test "$(wc -c <"$T_DIR/big")" -eq 300000

# Errors name what is wrong.
$CTL task run --name nope no-such-image 2>"$T_DIR/err" >/dev/null
check "unknown image refused" grep -q 'image no-such-image: not in any registry and no peer has it' "$T_DIR/err"
$CTL task run --name 'BAD/ID' busybox 2>"$T_DIR/err" >/dev/null
check "bad task id refused" grep -q 'task id' "$T_DIR/err"
$CTL task run --name failstart busybox -- /no/such/binary >/dev/null 2>"$T_DIR/err"
check "start failure reported" wait_for 10 task_is failstart exit_code 127
check "start failure has an error" bash -c "$CTL task inspect failstart | grep -q 'no such file'"
$CTL task rm live 2>"$T_DIR/err"
check "rm of a running task refused" grep -q 'stop it first' "$T_DIR/err"
$CTL image rm busybox 2>"$T_DIR/err"
check "image rm refused while tasks use it" grep -q 'used by' "$T_DIR/err"

# Removal leaves nothing behind.
$CTL task rm -f live
check "rm -f removes a running task" wait_for 10 bash -c "! $CTL task inspect live >/dev/null 2>&1"
for t in exit3 probe ro rw oom failstart; do $CTL task rm "$t"; done
check "no task left" test "$($CTL task ls | tail -n +2 | wc -l)" -eq 0
check "no container left in the runtime" test -z "$(ls "$RUN/runc")"
check "no overlay mount left" bash -c "! grep -q '$STATE' /proc/mounts"
check "no task dir left" test -z "$(ls "$STATE/shim/tasks")"
$CTL image rm busybox:latest
check "image rm empties the store" test -z "$(find "$STATE/shim/images/blobs/sha256" "$STATE/shim/images/layers" -mindepth 1)"
t_done

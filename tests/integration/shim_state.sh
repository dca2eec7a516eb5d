#!/usr/bin/env bash
# shim_state.sh: task records t/<node>/<task> in a real mts-statestore — written on every change, retried when the statestore starts after the shim, deleted with the task.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
NODE=0123456789abcdef0123456789abcdef
export MTS_NODE_ID=$NODE
ss_start() {
	rm -f "$RUN/statestore/statestore.sock"
	MTS_NODE=$NODE "$BIN/mts-statestore" -c "$T_DIR/mts.conf" -r "$RUN" -s "$T_DIR/ss" >>"$T_DIR/ss.log" 2>&1 &
	SS_PID=$!
	T_PIDS+=("$SS_PID")
	wait_for 10 test -S "$RUN/statestore/statestore.sock"
}
mkdir -p "$T_DIR/ss"
record() { "$CTL" state get --value "t/$NODE/$1" 2>/dev/null | tr -c '[:print:]' ' '; }
record_has() { record "$1" | grep -q "$2"; } # TASK WORD

# The shim first: its writes wait for the statestore.
shim_start
$CTL image import "$T_DIR/busybox-oci" >/dev/null
$CTL task run --name early busybox -- sh -c 'exit 4' >/dev/null
wait_for 10 task_is early state exited
check "statestore not running yet" test ! -S "$RUN/statestore/statestore.sock"
ss_start
check "statestore up" test -S "$RUN/statestore/statestore.sock"
check "the pending record is written once it is up" wait_for 15 record_has early exited

$CTL task run --name live busybox -- sleep 1000 >/dev/null
check "a running task's record says running" wait_for 10 record_has live running
check "the record holds the image" record_has live busybox
$CTL task stop --grace 0s live >/dev/null
check "the record follows the stop" wait_for 10 record_has live exited
check "ls shows the node's task keys" bash -c "$CTL state ls t/$NODE/ | grep -c 't/$NODE/' | grep -qx 2"
$CTL task rm live
check "rm deletes the record" wait_for 10 bash -c "! $CTL state get --value t/$NODE/live >/dev/null 2>&1"
# The environment stays on this node: the record carries the names only
# (it is replicated to every node), the local inspect the values.
$CTL task run --name envtask -e DB_PASSWORD=s3cr3t-pw-$$ -e PLAIN=1 busybox -- sh -c 'echo "pw=$DB_PASSWORD"' >/dev/null
wait_for 10 task_is envtask state exited
check "the task saw its env value" bash -c "$CTL logs envtask | grep -qx 'pw=s3cr3t-pw-$$'"
check "its record is written" wait_for 10 record_has envtask exited
leaks=0
for k in $($CTL state ls t/ | awk '{print $1}' | grep '^t/'); do
	"$CTL" state get --value "$k" | grep -qa "s3cr3t-pw-$$" && leaks=$((leaks + 1))
done
check "no t/ record holds the env value ($leaks)" test "$leaks" -eq 0
check "the record names the variables" record_has envtask 'DB_PASSWORD.*PLAIN'
check "local inspect shows the value" bash -c "$CTL -o json task inspect envtask | grep -q 'DB_PASSWORD=s3cr3t-pw-$$'"
check "the value is in the node's own task state" grep -qa "s3cr3t-pw-$$" "$STATE/shim/tasks/envtask/state.pb"
check "which only root reads" test "$(stat -c %a "$STATE/shim/tasks/envtask")" = 700
$CTL task rm envtask
$CTL task rm early
kill "$SS_PID"
t_done

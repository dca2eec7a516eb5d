#!/usr/bin/env bash
# shim_state.sh: task records t/<node>/<task> in a real mts-statestore — written on every change, retried when the statestore starts after the shim, deleted with the task.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
NODE=0123456789abcdef0123456789abcdef
export MTS_NODE_ID=$NODE
ss_start() {
	rm -f "$RUN/statestore.sock"
	MTS_NODE=$NODE "$BIN/mts-statestore" -c "$T_DIR/mts.conf" -r "$RUN" -s "$T_DIR/ss" >>"$T_DIR/ss.log" 2>&1 &
	SS_PID=$!
	T_PIDS+=("$SS_PID")
	wait_for 10 test -S "$RUN/statestore.sock"
}
mkdir -p "$T_DIR/ss"
record() { "$CTL" state get --value "t/$NODE/$1" 2>/dev/null | tr -c '[:print:]' ' '; }
record_has() { record "$1" | grep -q "$2"; } # TASK WORD

# The shim first: its writes wait for the statestore.
shim_start
$CTL image import "$T_DIR/busybox-oci" >/dev/null
$CTL task run --name early busybox -- sh -c 'exit 4' >/dev/null
wait_for 10 task_is early state exited
check "statestore not running yet" test ! -S "$RUN/statestore.sock"
ss_start
check "statestore up" test -S "$RUN/statestore.sock"
check "the pending record is written once it is up" wait_for 15 record_has early exited

$CTL task run --name live busybox -- sleep 1000 >/dev/null
check "a running task's record says running" wait_for 10 record_has live running
check "the record holds the image" record_has live busybox
$CTL task stop --grace 0s live >/dev/null
check "the record follows the stop" wait_for 10 record_has live exited
check "ls shows the node's task keys" bash -c "$CTL state ls t/$NODE/ | grep -c 't/$NODE/' | grep -qx 2"
$CTL task rm live
check "rm deletes the record" wait_for 10 bash -c "! $CTL state get --value t/$NODE/live >/dev/null 2>&1"
$CTL task rm early
kill "$SS_PID"
t_done

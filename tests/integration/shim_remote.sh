#!/usr/bin/env bash
# shim_remote.sh: logs and exec of a task on another node through the gossipd relay — a 2-node cluster whose nodes run mts-shim (real runc containers): logs, --tail, -f, exec output and exit code, -i stdin, -t terminal, back-pressure, abandoned sessions, unknown task, refused caller, node down.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
export MTS_CLUSTER_SHIM_CONF='exec_idle_timeout = 2s'
g_up_shims 2
id1=$(g_id 1)
CTL2="$BIN/mtsctl -r $(g_run 2)"

"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
g_ctl 1 image import "$T_DIR/busybox-oci" >/dev/null
g_ctl 1 task run --name printer busybox -- sh -c \
	'for i in 1 2 3 4 5; do echo "line $i"; done
	 while [ ! -e /tmp/go ]; do sleep 0.05; done
	 echo after-follow; exec sleep 1000' >/dev/null
printed() { g_ctl 1 logs printer | grep -q 'line 5'; }
check "the task prints on node 1" wait_for 10 printed
has_record() { g_ctl 2 state get "t/$id1/printer" >/dev/null; }
check "node 2 holds the task's record" wait_for 10 has_record

# logs from node 2 equal node 1's
g_ctl 1 logs printer >"$T_DIR/l1"
g_ctl 2 logs printer >"$T_DIR/l2"
check "logs from node 2 equal node 1's" cmp -s "$T_DIR/l1" "$T_DIR/l2"
check "... and are the task's lines" test "$(wc -l <"$T_DIR/l2")" -eq 5
check "logs --tail 2 from node 2 equal node 1's" \
	test "$(g_ctl 2 logs --tail 2 printer)" = "$(g_ctl 1 logs --tail 2 printer)"
check "... the last two lines" test "$(g_ctl 2 logs --tail 2 printer)" = "$(printf 'line 4\nline 5')"
check "logs --node n1 from node 2" test "$(g_ctl 2 logs --node n1 --tail 1 printer)" = "line 5"

# logs -f from node 2 sees a line written after it started
$CTL2 logs -f printer >"$T_DIR/follow" 2>&1 &
FOLLOW=$!
T_PIDS+=("$FOLLOW")
check "logs -f from node 2 prints what was there" wait_for 10 grep -q 'line 5' "$T_DIR/follow"
g_ctl 1 exec printer -- touch /tmp/go
check "logs -f from node 2 sees a line written later" wait_for 10 grep -q after-follow "$T_DIR/follow"
kill "$FOLLOW" 2>/dev/null

# exec from node 2: output and exit code
out=$(g_ctl 2 exec printer -- sh -c 'echo "out on $(hostname)"; echo err >&2; exit 5' 2>&1)
rc=$?
check "exec from node 2 returns the exit code" test $rc -eq 5
check "exec from node 2 prints stdout" grep -qx 'out on printer' <<<"$out"
check "exec from node 2 prints stderr" grep -qx err <<<"$out"
check "exec -e passes the environment" \
	test "$(g_ctl 2 exec -e GREETING=hi printer -- sh -c 'echo $GREETING')" = hi
g_ctl 2 exec printer -- sh -c 'kill -9 $$'
check "a command killed by a signal exits 128+N" test $? -eq 137

# -i: stdin passed on (and EOF: cat ends)
check "exec -i from node 2 passes stdin" \
	test "$(printf 'one\ntwo\n' | g_ctl 2 exec -i printer -- cat)" = "$(printf 'one\ntwo')"
check "exec without -i gives an empty stdin" \
	test "$(echo ignored | g_ctl 2 exec printer -- cat | wc -c)" -eq 0
# more than the shim's stdin and output buffers, both ways
seq 1 60000 >"$T_DIR/in"
g_ctl 2 exec -i printer -- cat <"$T_DIR/in" >"$T_DIR/back"
check "exec -i moves 350 KB through the relay both ways intact" cmp -s "$T_DIR/in" "$T_DIR/back"
n=$(g_ctl 2 exec printer -- seq 1 200000 | wc -l)
check "exec output larger than the session buffer arrives whole ($n lines)" test "$n" -eq 200000
# A reader that stalls until the command has ended (the shim then holds
# the rest, partly still in its pipe from runc): nothing may be dropped.
# (The exact case of a full buffer at the drain time is in test_shim_exec.)
n=$(g_ctl 2 exec printer -- seq 1 50000 | (sleep 1.5; wc -l))
check "output still queued when the command ends arrives whole ($n lines)" test "$n" -eq 50000

# -t: a terminal, its window size, the exit code
script -qec "stty rows 33 cols 101; $CTL2 exec -t printer -- sh -c 'tty; stty size; test -t 0 && echo is-a-tty; exit 7'; echo rc=\$?" \
	/dev/null </dev/null >"$T_DIR/tty" 2>&1
# (script turns its own empty stdin into an EOF key, echoed as ^@, which
# on a loaded machine can land at the start of any later line)
tr -d '\r' <"$T_DIR/tty" | sed 's/\^@//g' >"$T_DIR/tty2"
check "exec -t from node 2 runs on a terminal" grep -q '/dev/pts/[0-9]' "$T_DIR/tty2"
check "exec -t: test -t 0 holds" grep -qx is-a-tty "$T_DIR/tty2"
check "exec -t: the window size is passed on" grep -qx '33 101' "$T_DIR/tty2"
check "exec -t: the exit code comes back" grep -qx rc=7 "$T_DIR/tty2"
grep -qx rc=7 "$T_DIR/tty2" || sed 's/^/    tty: /' "$T_DIR/tty" | cat -v | head -20
g_ctl 2 exec -t printer -- true </dev/null 2>"$T_DIR/err"
rc=$?
check "exec -t without a terminal is a usage error ($rc)" test $rc -eq 2
check "... that says so" grep -q 'needs a terminal' "$T_DIR/err"

# A vanished client's session is killed after exec_idle_timeout (2 s).
$CTL2 exec printer -- sleep 777 &
EX=$!
disown "$EX"
sleeping() { pgrep -f 'sleep 77[7]' >/dev/null; }
check "an exec session runs its command" wait_for 10 sleeping
kill -9 "$EX"
check "a session whose client vanished is killed" wait_for 10 eval '! sleeping'

# Clear errors.
g_ctl 2 logs no-such-task 2>"$T_DIR/err"
rc=$?
check "logs of a task on no node exits 5 ($rc)" test $rc -eq 5
check "... saying so" grep -q 'task no-such-task not found on any node' "$T_DIR/err"
g_ctl 2 exec no-such-task -- true 2>"$T_DIR/err"
check "exec of a task on no node exits 5" test $? -eq 5
g_ctl 2 logs --node nosuchnode printer 2>"$T_DIR/err"
check "an unknown --node exits 5" test $? -eq 5
check "... saying so" grep -q 'not a member' "$T_DIR/err"
# A caller the local gossipd does not relay for (in the admin group, so
# it reaches the sockets, but not in [gossipd] acl_relay).
adm=$((${MTS_CLUSTER_UID:-64200} + 20))
setpriv --reuid=$((adm + 9)) --regid="$adm" --clear-groups \
	$CTL2 logs --node n1 printer 2>"$T_DIR/err"
rc=$?
check "a caller outside acl_relay is refused ($rc)" test $rc -eq 4
check "... naming acl_relay" grep -q acl_relay "$T_DIR/err"

# The task's node down: a clear error within the relay's timeout.
g_ctl 1 task ls >/dev/null
"$GOSSIP_CLUSTER" kill 1
start=$SECONDS
g_ctl 2 logs printer 2>"$T_DIR/err"
rc=$?
check "logs with the task's node down exits 3 ($rc)" test $rc -eq 3
check "... within the timeout ($((SECONDS - start)) s)" test $((SECONDS - start)) -le 6
check "... saying the node is unreachable" grep -q 'node n1 .* unreachable' "$T_DIR/err"
g_ctl 2 exec printer -- true 2>"$T_DIR/err"
check "exec with the task's node down exits 3" test $? -eq 3
dead1() { [ "$(g_state_of 2 "$id1")" = dead ]; }
if wait_for 20 dead1; then
	start=$SECONDS
	g_ctl 2 logs printer 2>"$T_DIR/err"
	rc=$?
	check "once gossip says dead: exit 3 at once ($rc)" test $rc -eq 3 -a $((SECONDS - start)) -le 1
	check "... saying so" grep -q 'gossip reports it dead' "$T_DIR/err"
else
	fail "node 2 sees node 1 dead"
fi
# Under `make check` the agents report sanitizer findings in their logs.
if grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$MTS_CLUSTER_DIR"/n*/log/*.log; then
	fail "no sanitizer report in the nodes' logs"
	grep -E -A5 'runtime error|AddressSanitizer|LeakSanitizer' "$MTS_CLUSTER_DIR"/n*/log/*.log | head -20
else
	pass "no sanitizer report in the nodes' logs"
fi
t_done

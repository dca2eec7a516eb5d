#!/usr/bin/env bash
# statestore_durability.sh: SIGKILL the statestore at random moments under a stream of writes; every acknowledged write must survive.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
printf '[node]\nrundir = %s/run\nstatedir = %s/state\n' "$T_DIR" "$T_DIR" >"$T_DIR/mts.conf"
SS=$BUILD/tests/sstool
SOCK=$T_DIR/run/statestore/statestore.sock
KILLS=${KILLS:-24}

start() {
	"$BIN/mts-statestore" -c "$T_DIR/mts.conf" -r "$T_DIR/run" -s "$T_DIR/state" 2>>"$T_DIR/log" &
	SS_PID=$!
	T_PIDS+=("$SS_PID")
	wait_for 10 "$SS" "$SOCK" root >/dev/null
}

start
"$SS" "$SOCK" writer 1000000 "$T_DIR/acked" 2>/dev/null &
WRITER=$!
T_PIDS+=("$WRITER")
opened=0
for i in $(seq 1 "$KILLS"); do
	sleep "0.$((RANDOM % 4 + 1))$((RANDOM % 10))"
	kill -9 "$SS_PID"
	wait "$SS_PID" 2>/dev/null
	if start; then opened=$((opened + 1)); fi
done
sleep 0.3
kill "$WRITER"
wait "$WRITER" 2>/dev/null
acked=$(wc -l <"$T_DIR/acked")
echo "$KILLS kills, $acked acknowledged writes"
check "store reopened cleanly after each of $KILLS kills" [ "$opened" -eq "$KILLS" ]
check "writes were acknowledged throughout" [ "$acked" -gt $((KILLS * 10)) ]
check "every acknowledged write present" "$SS" "$SOCK" verify "$T_DIR/acked"
check "no corrupt records reported" bash -c "! grep -q corrupt '$T_DIR/log'"

# A stop under writes: SIGHUP is ignored; SIGTERM ends the agent once the
# rounds it accepted are durable and answered, and it exits 0.
"$SS" "$SOCK" writer 1000000 "$T_DIR/acked2" 2>/dev/null &
WRITER=$!
T_PIDS+=("$WRITER")
sleep 0.5
kill -HUP "$SS_PID"
sleep 0.2
check "SIGHUP leaves it serving" kill -0 "$SS_PID"
kill -TERM "$SS_PID"
wait "$SS_PID"
rc=$?
kill "$WRITER"
wait "$WRITER" 2>/dev/null
check "SIGTERM under writes: exit status 0" [ "$rc" -eq 0 ]
check "the stop logged its totals" grep -q "stopped: [1-9][0-9]* writes" "$T_DIR/log"
start
check "writes were acknowledged before SIGTERM" [ "$(wc -l <"$T_DIR/acked2")" -gt 10 ]
check "every write acknowledged before SIGTERM present" "$SS" "$SOCK" verify "$T_DIR/acked2"
t_done

#!/usr/bin/env bash
# events.sh: `mtsctl events` over event files written by common/event.c's writer (tests/eventtool, as agents write them): several agents' files merged in time order with the rotated ones, -o json lines, --since, -f following appends, new agents and a rotation, lines that are not events skipped with a warning, usage errors.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
CTL=$BIN/mtsctl
EV=$BUILD/tests/eventtool
RUN=$T_DIR/run
mkdir -p "$RUN/reconciled" "$RUN/gossipd" "$RUN/shim"
export MTS_RUNDIR=$RUN
cd "$T_DIR" || exit 1
# jl EXPR: a Python expression over the JSON lines on stdin, j (a list)
jl() { python3 -c 'import json,sys; j=[json.loads(l) for l in sys.stdin]; sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }

$CTL events >out 2>err
check "no events: exit 0, the header only" test $? -eq 0
check "... TIME AGENT TYPE" grep -q '^TIME  *AGENT  *TYPE  *SERVICE  *TASK  *ON  *MESSAGE' out
check "... one line" test "$(wc -l <out)" -eq 1

check "a writer writes" "$EV" "$RUN/gossipd" 0 node.suspect "" "" node-3 "no ack in 1 s"
sleep 0.01
"$EV" "$RUN/reconciled" 0 task.placed shop_web t1 node-2 "1 of 3 live"
sleep 0.01
"$EV" "$RUN/gossipd" 0 node.dead "" "" node-3
sleep 0.01
"$EV" "$RUN/reconciled" 0 update.batch_done shop_web "" "" "batch 1 of 3 done"
"$EV" "$RUN/reconciled" 0 task.exploded shop_web 2>/dev/null
check "the writer refuses an unknown type" test $? -ne 0

$CTL -o json events >out
check "-o json: one object per line, every agent's, in time order" jl '[e["type"] for e in j] == ["node.suspect", "task.placed", "node.dead", "update.batch_done"]' <out
check "... with node, agent, service, task, on, message" jl 'j[1] == {**j[1], "node": "node-1", "agent": "reconciled", "service": "shop_web", "task": "t1", "on": "node-2", "message": "1 of 3 live"} and j[1]["time"].endswith("Z")' <out
check "... and no empty fields" jl '"service" not in j[0] and "message" not in j[2]' <out
$CTL events >out
check "table: a line per event" test "$(wc -l <out)" -eq 5
check "... with its fields" grep -Eq '^[0-9T:.-]+Z +reconciled +task.placed +shop_web +t1 +node-2 +1 of 3 live$' out
check "... - for an absent one" grep -Eq ' gossipd +node.dead +- +- +node-3 +-$' out

# an old event, written as an agent of an older day would have
printf '{"time":"2020-01-01T00:00:00.000Z","ms":1577836800000,"node":"node-1","agent":"shim","type":"task.started","task":"old"}\n' >"$RUN/shim/events.jsonl"
$CTL -o json events >out
check "old events come first" jl 'j[0]["task"] == "old" and len(j) == 5' <out
$CTL -o json events --since 1h >out
check "--since 1h leaves them out" jl 'len(j) == 4 and all(e.get("task") != "old" for e in j)' <out
$CTL -o json events --since 0s >out
check "--since 0s: none" test ! -s out
printf 'not json\n{"ms": 1, "type": "nope"}\n' >>"$RUN/shim/events.jsonl"
$CTL -o json events >out 2>err
check "lines that are not events are skipped" jl 'len(j) == 5' <out
check "... with a warning" grep -q '2 lines of the event files were not events' err

# rotated files are read too
"$EV" "$RUN/shim" 300 task.stopped shop_web t9 "" "" x5
check "the writer rotated" test -s "$RUN/shim/events.jsonl.1"
$CTL -o json events >out
check "rotated and current files both read" jl 'sum(e["type"] == "task.stopped" for e in j) >= 3' <out

# -f follows: appends, a new agent's file, a rotation in between
: >"$RUN/shim/events.jsonl"
rm -f "$RUN/shim/events.jsonl.1"
$CTL -o json events -f --since 1m >follow 2>&1 &
fpid=$!
T_PIDS+=($fpid)
check "-f prints what was there" wait_for 5 grep -q node.dead follow
"$EV" "$RUN/reconciled" 0 update.completed shop_web "" "" "done"
check "-f prints an appended event" wait_for 5 grep -q update.completed follow
mkdir -p "$RUN/netd"
"$EV" "$RUN/netd" 0 task.started shop_web t5
check "-f finds a new agent's file" wait_for 5 grep -q '"agent":"netd"' follow
"$EV" "$RUN/shim" 1200 task.failed shop_web tf "" "exit 1" x6
"$EV" "$RUN/shim" 1200 task.failed shop_web tf "" "exit 1" x6
check "... (it rotated once)" test -s "$RUN/shim/events.jsonl.1"
check "-f reads through a rotation: every event once" wait_for 5 bash -c '[ "$(grep -c task.failed follow)" -eq 12 ]'
sleep 0.5
check "... and no more" test "$(grep -c task.failed follow)" -eq 12
kill "$fpid" 2>/dev/null

$CTL events --since soon >/dev/null 2>&1
check "--since with no duration: usage error" test $? -eq 2
$CTL events extra >/dev/null 2>&1
check "an argument: usage error" test $? -eq 2
MTS_RUNDIR=$T_DIR/nope $CTL events 2>err
check "no run directory: exit 3" test $? -eq 3
check "... saying where it looked" grep -q 'is mts-init running with run directory' err
check "events --help" bash -c "$CTL events --help | grep -q 'events.jsonl'"
t_done

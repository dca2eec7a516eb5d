#!/usr/bin/env bash
# recon_crash.sh: a crash-looping task on 3 real nodes with real containers — restart_policy {on-failure, delay 200ms, max_attempts 2, window 20s}: the task restarts on its own node, same task id, with backoff (200 then 400 ms); after its 2 restarts its node gives up (failed, with the reason) and the owner places a replacement in the same slot on another node, records why in p/ (service inspect's placement.replaced) and writes task.placed and task.replaced events; the replacement's own crash loop sends the next one to the third node; a failure whose node's clock runs 2 h behind (its record ended 2 h ago) still keeps a new deploy off that node, as failed_avoid counts from when the owner first saw it.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack crash 'services:
  loop:
    image: busybox:latest
    command: ["sh", "-c", "sleep 2; exit 3"]
    stop_grace_period: 1s
    deploy:
      replicas: 1
      restart_policy: {condition: on-failure, delay: 200ms, max_attempts: 2, window: 20s}'
check "deploy --detach exits 0" g_ctl 1 deploy -c crash.yml --stack c --detach

# first I: the first task's id and node, as node I sees it
first_task() { s_ps 1 c_loop | jp '" ".join(t["task"] + " " + t["node"] for t in j if t["slot"] == 1)' | awk 'NF {print $1, $2}'; }
# (a failed mtsctl call reads as no task: the answer is kept once seen)
got_first() { F=$(first_task); [ -n "$F" ]; }
check "a task is placed" wait_for 20 got_first
read -r T1 N1 <<<"$F"
A=$(s_name_of "$N1")
A=${A#n}
echo "    first task $T1 on n$A"

# rec I ID FIELD: a field of task ID's t/ record as node I's shim sees it
shim_field() { g_ctl "$1" -o json task inspect "$2" 2>/dev/null | jp 'j["'"$3"'"]'; }
restarted() { [ "$(shim_field "$A" "$T1" restarts)" -ge "$1" ] 2>/dev/null; }
check "$T1 restarts on its own node n$A (restarts >= 1)" wait_for 15 restarted 1
check "... and again (restarts 2)" wait_for 15 restarted 2
SHIMLOG=$MTS_CLUSTER_DIR/n$A/log/shim.log
check "... with backoff: 200 ms, then 400 ms" \
	bash -c "grep -q 'task $T1: restart 1 in 200 ms' '$SHIMLOG' && grep -q 'task $T1: restart 2 in 400 ms' '$SHIMLOG'"
failed() { [ "$(shim_field "$A" "$T1" state)" = failed ]; }
check "after its 2 restarts n$A gives up: $T1 failed" wait_for 20 failed
err_of() { s_ps 1 c_loop | jp 'next((t["error"] for t in j if t["task"] == "'"$1"'"), "")'; }
gave_up() { err_of "$T1" | grep -q 'restart policy gave up after 2 restarts (exit code 3)'; }
check "... its record says why" wait_for 10 gave_up
echo "    $T1: $(err_of "$T1")"

# replacement: the task in slot 1 that is not T1
repl() { s_ps 1 c_loop | jp '" ".join(t["task"] + " " + t["node"] for t in j if t["slot"] == 1 and t["task"] != "'"$T1"'")' | awk 'NF {print $1, $2}'; }
has_repl() { F=$(repl); [ -n "$F" ]; }
check "the owner replaces it in slot 1" wait_for 15 has_repl
read -r T2 N2 <<<"$F"
B=$(s_name_of "$N2")
echo "    replacement $T2 on $B"
check "... on another node than n$A ($B)" test "$B" != "n$A"
running2() { [ "$(s_ps 1 c_loop | jp 'next((t["state"] for t in j if t["task"] == "'"$T2"'"), "")')" = running ]; }
check "... which runs" wait_for 15 running2
# the owner's record of why
owner=$(s_name_of "$(s_owner 1 c_loop)")
replaced() { g_ctl 1 -o json service inspect c_loop | jp 'j.get("placement", {}).get("replaced", "")'; }
names_both() { replaced | grep -qF "$T1 on n$A failed (restart policy gave up after 2 restarts (exit code 3)): replaced by $T2 on $B"; }
check "service inspect: placement.replaced names both tasks and why" wait_for 5 names_both
echo "    placement.replaced: $(replaced)"
# jl_has LINES EXPR: EXPR over the JSON lines LINES, as the list j
jl_has() { python3 -c 'import json,sys; j=[json.loads(l) for l in sys.argv[1].splitlines() if l.strip()]; sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"; }
ev=$(g_ctl "${owner#n}" -o json events)
check "the owner's events: task.replaced of $T1" \
	jl_has "$ev" 'any(e["type"] == "task.replaced" and e.get("task") == "'"$T1"'" and "gave up" in e.get("message", "") for e in j)'
check "... after task.placed of $T1, then of $T2" \
	jl_has "$ev" '[(e["type"], e.get("task")) for e in j if e["type"] in ("task.placed", "task.replaced") and e.get("task") in ("'"$T1"'", "'"$T2"'")][:3] == [("task.placed", "'"$T1"'"), ("task.placed", "'"$T2"'"), ("task.replaced", "'"$T1"'")]'
grep -q "event .*task.replaced.*$T1" "$MTS_CLUSTER_DIR/$owner/log/reconciled.log"
check "... and in its log as 'event {...}'" test $? = 0

# T2 crash-loops too: the next replacement avoids both n$A and $B (the
# owner's third task.placed event says where it went)
third() { g_ctl "${owner#n}" -o json events | python3 -c 'import json,sys; p=[json.loads(l) for l in sys.stdin if "task.placed" in l]; print(p[2]["on"] if len(p) > 2 else "")'; }
has_third() { [ -n "$(third)" ]; }
check "$T2 fails in turn and is replaced" wait_for 30 has_third
C=$(third)
check "... on the third node ($C)" bash -c "[ '$C' != 'n$A' ] && [ '$C' != '$B' ]"
g_ctl 1 service rm c_loop >/dev/null

# failed_avoid counts from when the owner first saw a failure, on its own
# monotonic clock, not from the failing node's wall clock: a failed task of
# c_skew on n2 whose record says it was placed and ended 2 hours ago (n2's
# clock runs 2 h behind; only n2 writes its t/ records) still keeps a
# deploy of 3 replicas off n2
skew_key=t/$(g_id 2)/c_skew.1.5eed0001
t=$(($(date +%s%3N) - 7200000))
"$TOP/tests/integration/taskrec.py" id=c_skew.1.5eed0001 state=failed \
    exit_code=3 started_at=$((t - 5000)) finished_at=$t \
    "error=restart policy gave up after 2 restarts (exit code 3)" \
    service=c_skew version=1 desired=running slot=1 assigned_at=$((t - 6000)) |
	g_ctl 2 state put "$skew_key" - >/dev/null
has_skew() { local i; for i in 1 2 3; do g_ctl "$i" state get "$skew_key" >/dev/null 2>&1 || return 1; done; }
check "a failed task record of c_skew on n2, ended 2 h ago by n2's clock, on every node" wait_for 20 has_skew
s_stack skew 'services:
  skew:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 3'
check "deploy of c_skew, 3 replicas" g_ctl 1 deploy -c skew.yml --stack c --wait 40
where=$(s_per_node 1 c_skew)
check "... none on n2, where it failed ($where)" bash -c "! grep -q 'n2=' <<<'$where' && [ '$(s_running 1 c_skew)' = 3 ]"
g_ctl 1 service rm c_skew >/dev/null
g_ctl 2 state rm "$skew_key" >/dev/null
t_done

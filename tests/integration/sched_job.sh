#!/usr/bin/env bash
# sched_job.sh: a replicated-job of 3 completions on a 3-node cluster — deploy waits for and reports 3/3 completed, the service ends with exactly 3 tasks exited 0 (every node's service ps agreeing), none restarted, and no task is started again afterwards.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack job 'services:
  once:
    image: busybox:latest
    command: ["sh", "-c", "echo job done on $$(hostname); sleep 1; exit 0"]
    deploy:
      mode: replicated-job
      replicas: 3'
out=$(g_ctl 3 deploy -c job.yml --stack j --wait 60 2>&1)
check "deploy of the job exits 0" test $? -eq 0
check "... after printing j_once: 3/3 completed" grep -q '^j_once: 3/3 completed' <<<"$out"

# done_tasks I: "count exited-0 other" in node I's records
summary() {
	s_ps "$1" j_once | jp '"%d %d %d" % (len(j), sum(1 for t in j if t["state"] == "exited" and t["exit_code"] == 0), sum(1 for t in j if t["state"] not in ("exited",)))'
}
for i in 1 2 3; do
	check "node $i's service ps: 3 tasks, all exited 0 ($(summary "$i"))" wait_for 10 test "$(summary "$i")" = "3 3 0"
done
restarts=0 logs=0
for i in 1 2 3; do
	r=$(g_ctl "$i" -o json task ls | jp 'sum(t["restarts"] for t in j if t.get("service") == "j_once")')
	restarts=$((restarts + r))
	for t in $(g_ctl "$i" -o json task ls | jp '" ".join(t["id"] for t in j if t.get("service") == "j_once")'); do
		g_ctl "$i" logs "$t" | grep -q '^job done on' && logs=$((logs + 1))
	done
done
check "none of them was restarted by its shim ($restarts restarts)" test "$restarts" = 0
check "each of the 3 printed its line ($logs)" test "$logs" = 3
sleep 5 # a reconciler that restarts finished jobs has done it by now
check "5 s later: still 3 tasks, all exited 0 ($(summary 1))" test "$(summary 1)" = "3 3 0"
check "service ls shows it complete (3 done of 3)" \
	bash -c "[ \"\$('$BIN/mtsctl' -r '$(g_run 2)' -o json service ls | python3 -c 'import json,sys; s=[s for s in json.load(sys.stdin) if s[\"name\"] == \"j_once\"][0]; print(s[\"running\"], s[\"desired\"])')\" = '0 3' ]"
t_done

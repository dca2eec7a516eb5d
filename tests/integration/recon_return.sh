#!/usr/bin/env bash
# recon_return.sh: a node that comes back after a crash on 3 real nodes with real containers — 6 replicas (restart_policy delay 0s: an old shim restarts them at once) run 2 per node and a global service (restart_policy delay 15s) runs on each; SIGKILL of node 3's process tree; the owner replaces its 2 replicas on the survivors; node 3 restarts: over the return window its shim never runs the replaced tasks' containers again (sampled every 100 ms from before its start, nothing in its log about restarting them, no task.started of them in its events), they are stopped as superseded and removed, the service stays at exactly 6, and node 3's global task, still its own, runs again within 10 s of the node's start, not after its 15 s restart delay.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack ret 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 6
      restart_policy: {condition: any, delay: 0s}
  agent:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      mode: global
      restart_policy: {condition: any, delay: 15s}'
check "deploy exits 0" g_ctl 1 deploy -c ret.yml --stack ret --wait 60
check "web runs 2 per node" wait_for 20 bash -c "[ \"\$($(declare -f s_per_node s_ps g_ctl jp); GOSSIP_CLUSTER=$GOSSIP_CLUSTER s_per_node 1 ret_web)\" = 'n1=2 n2=2 n3=2' ]"
check "agent runs on each node" wait_for 20 bash -c "[ \"\$($(declare -f s_per_node s_ps g_ctl jp); GOSSIP_CLUSTER=$GOSSIP_CLUSTER s_per_node 1 ret_agent)\" = 'n1=1 n2=1 n3=1' ]"

v3=$(g_id 3)
old=$(s_ps 1 ret_web | jp '" ".join(sorted(t["task"] for t in j if t["node"] == "'"$v3"'" and t["state"] == "running"))')
agent3=$(s_ps 1 ret_agent | jp 'next((t["task"] for t in j if t["node"] == "'"$v3"'" and t["state"] == "running"), "")')
check "node 3 runs 2 web tasks ($old) and the agent task $agent3" \
	test "$(wc -w <<<"$old")" = 2 -a -n "$agent3"

# on_survivors: running web tasks not on node 3, in node 1's view
on_survivors() {
	s_ps 1 ret_web | jp 'sum(1 for t in j if t["state"] == "running" and t["desired_state"] == "running" and t["node"] != "'"$v3"'")'
}
echo "    SIGKILL of node 3's process tree"
"$GOSSIP_CLUSTER" kill 3 >/dev/null
check "the owner replaces its 2 tasks: 6 running on n1 and n2" \
	wait_for 30 bash -c "[ \"\$($(declare -f on_survivors s_ps g_ctl jp); v3=$v3 GOSSIP_CLUSTER=$GOSSIP_CLUSTER on_survivors)\" = 6 ]"
after=$(s_ps 1 ret_web | jp '" ".join(sorted(t["task"] for t in j if t["state"] == "running" and t["node"] != "'"$v3"'"))')

# Sample node 3's shim every 100 ms from before its start (mtsctl fails
# until the shim listens) for 14 s: the old tasks' states, and when the
# agent task first runs again.
python3 - "$MTS_CLUSTER_DIR/n3/run" "$BIN/mtsctl" "$old" "$agent3" >"$T_DIR/samples" <<'PY' &
import json, subprocess, sys, time
run, ctl, old, agent = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
t0, ran, back, n = time.time(), set(), None, 0
while time.time() - t0 < 14:
    p = subprocess.run([ctl, "-r", run, "-o", "json", "task", "ls"], capture_output=True, text=True)
    if p.returncode == 0:
        n += 1
        for t in json.loads(p.stdout):
            # a container of it exists (stopping: it ran until the stop)
            if t["id"] in old and (t["state"] in ("created", "running", "stopping") or t["pid"] > 0):
                ran.add(t["id"])
            if t["id"] == agent and t["state"] == "running" and back is None:
                back = time.time()
    time.sleep(0.1)
print(n, ",".join(sorted(ran)) or "-", "%.3f" % back if back is not None else "never")
PY
sampler=$!
shimlog=$MTS_CLUSTER_DIR/n3/log/shim.log
logpos=$(stat -c %s "$shimlog" 2>/dev/null || echo 0)
echo "    restarting node 3"
t0=$(date +%s.%N)
"$GOSSIP_CLUSTER" start 3 >/dev/null || fail "node 3 restarted"
up=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)") # every agent listens
wait "$sampler"
read -r nsamples ran back_at <"$T_DIR/samples"
back=never
[ "$back_at" = never ] || back=$(printf '%.1f' "$(echo "$back_at - $t0" | bc)")
echo "    node 3 up (every agent listening) $up s after its start; $nsamples samples of its shim; old tasks seen running: $ran; agent back $back s after the start"
check "node 3's shim never ran the replaced tasks again ($nsamples samples; seen: $ran)" \
	test "$ran" = - -a "$nsamples" -gt 20
# restart_lines: what node 3's shim logged since its start of restarting
# or ending an old task's container
restart_lines() {
	local id
	for id in $old; do
		tail -c +"$((logpos + 1))" "$shimlog" | grep -E "task $id(:)? (restart|exited|released)"
	done
}
check "... nor logged a restart or an exit of one ($(restart_lines | wc -l) lines)" test -z "$(restart_lines)"
check "node 3's agent task ran again within 10 s of the node's start ($back s; its restart delay is 15 s)" \
	bash -c "[ '$back' != never ] && [ \"\$(echo '$back <= 10' | bc)\" = 1 ]"
started_again() {
	g_ctl 3 -o json events | python3 -c '
import json, sys
old, t0 = sys.argv[1].split(), float(sys.argv[2]) * 1000
sys.exit(1 if any(e["type"] == "task.started" and e.get("task") in old and e["ms"] >= t0 for e in map(json.loads, filter(str.strip, sys.stdin))) else 0)' "$old" "$t0"
}
check "... and no task.started of them in node 3's events" started_again
superseded() {
	g_ctl 3 -o json events | python3 -c '
import json, sys
old, t0 = sys.argv[1].split(), float(sys.argv[2]) * 1000
ev = [e for e in map(json.loads, filter(str.strip, sys.stdin)) if e["type"] == "task.stopped" and e["ms"] >= t0]
sys.exit(0 if all(any(e.get("task") == t and ("superseded" in e.get("message", "") or "stale" in e.get("message", "")) for e in ev) for t in old) else 1)' "$old" "$t0"
}
check "... node 3 stopped each of them (superseded, or stale by the owner)" wait_for 10 superseded
# shellcheck disable=SC2086 # $old is a list of IDs
check "... and their records are removed" wait_for 20 s_records_gone 1 $old
check "web stays at exactly 6 (sampled 4 times over 4 s)" s_stays 1 ret_web 6 4
check "... the 6 that ran after the repair" test "$(s_ps 1 ret_web | jp '" ".join(sorted(t["task"] for t in j if t["state"] == "running"))')" = "$after"
check "agent runs on each node again" wait_for 10 bash -c "[ \"\$($(declare -f s_per_node s_ps g_ctl jp); GOSSIP_CLUSTER=$GOSSIP_CLUSTER s_per_node 1 ret_agent)\" = 'n1=1 n2=1 n3=1' ]"
check "... node 3's is the same task as before the crash" \
	test "$(s_ps 1 ret_agent | jp 'next((t["task"] for t in j if t["node"] == "'"$v3"'" and t["state"] == "running"), "")')" = "$agent3"
t_done

#!/usr/bin/env bash
# recon_update_owner.sh: the owner killed in the middle of a rolling update, on 3 real nodes with real containers — 6 replicas updated one at a time; after the second batch the owner's whole process tree is SIGKILLed; the next owner in rendezvous order takes the update over from the replicated u/ status (it is named in it) and finishes it: all 6 on the new spec, u/ completed at the same version, the tasks already updated on the survivors kept (not updated again), and, sampled every 200 ms, the survivors never ran fewer than their tasks at the kill less one (the batch in flight).
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack up 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 6
      update_config: {parallelism: 1, delay: 2s, monitor: 1s, order: stop-first}'
check "deploy of 6 replicas exits 0" g_ctl 1 deploy -c up.yml --stack up --wait 60
check "... 2 per node" wait_for 20 bash -c "[ \"\$($(declare -f s_per_node s_ps g_ctl jp); GOSSIP_CLUSTER=$GOSSIP_CLUSTER s_per_node 1 up_web)\" = 'n1=2 n2=2 n3=2' ]"

owner=$(s_name_of "$(s_owner 1 up_web)")
victim=${owner#n}
look=1
[ "$victim" = 1 ] && look=2
vid=$(g_id "$victim")
# ustat FIELD: a field of the update status, from node $look
ustat() { g_ctl "$look" -o json service inspect up_web | jp 'j.get("update_status", {}).get("'"$1"'", "")'; }
check "service update --env-add V=2 (a new spec)" g_ctl "$look" service update up_web --env-add V=2
second_done() { [ "$(ustat state)" = updating ] && [ "$(ustat batch)" -ge 3 ] 2>/dev/null; }
check "the update reaches its third batch" wait_for 40 second_done
kill_progress=$(ustat progress)
echo "    at $kill_progress, owner n$victim; killing it"
# ids I: "id:current" of the running tasks on the survivors, in node I's view
ids() { s_ps "$1" up_web | jp '" ".join(sorted("%s:%d" % (t["task"], t.get("current", False)) for t in j if t["state"] == "running" and t["desired_state"] == "running" and t["node"] != "'"$vid"'"))'; }
at_kill=$(ids "$look")
new_at_kill=$(tr ' ' '\n' <<<"$at_kill" | sed -n 's/:1$//p' | tr '\n' ' ')
n_at_kill=$(wc -w <<<"$at_kill")
"$GOSSIP_CLUSTER" kill "$victim" >/dev/null

# sample the survivors' running tasks every 200 ms until the update ends
python3 - "$MTS_CLUSTER_DIR/n$look/run" "$BIN/mtsctl" "$vid" "$T_DIR/samples" <<'PY' &
import json, os, subprocess, sys, time
run, ctl, vid, out = sys.argv[1:5]
with open(out, "w") as f:
    while not os.path.exists(out + ".stop"):
        t0 = time.time()
        p = subprocess.run([ctl, "-r", run, "-o", "json", "service", "ps", "up_web"], capture_output=True, text=True)
        if p.returncode == 0:
            j = json.loads(p.stdout)
            f.write(" ".join(sorted(t["task"] for t in j if t["state"] == "running" and t["desired_state"] == "running" and t["node"] != vid)) + "\n")
            f.flush()
        time.sleep(max(0, 0.2 - (time.time() - t0)))
PY
sampler=$!
T_PIDS+=($sampler)
new_owner() { o=$(ustat owner); [ -n "$o" ] && [ "$o" != "$vid" ]; }
check "the u/ status names a new owner" wait_for 30 new_owner
nown=$(ustat owner)
kill_batch=${kill_progress%%/*}
took=$(ustat batch)
check "... which goes on from batch $kill_batch, not from the start (batch $took of $(ustat batches))" test "${took:-0}" -ge "$kill_batch"
check "... the next in rendezvous order, as service ls names it ($(s_name_of "$nown"))" test "$(s_owner "$look" up_web)" = "$nown"
done_all() {
	[ "$(ustat state)" = completed ] &&
		[ "$(s_ps "$look" up_web | jp 'sum(1 for t in j if t["state"] == "running" and t["desired_state"] == "running" and t["current"] and t["node"] != "'"$vid"'")')" = 6 ]
}
check "it finishes the update: u/ completed, 6 on the new spec on the survivors" wait_for 60 done_all
touch "$T_DIR/samples.stop"
wait "$sampler" 2>/dev/null
check "... at version 2, in 6 batches" bash -c "[ \"\$($(declare -f ustat g_ctl jp); look=$look GOSSIP_CLUSTER=$GOSSIP_CLUSTER; ustat version)/\$($(declare -f ustat g_ctl jp); look=$look GOSSIP_CLUSTER=$GOSSIP_CLUSTER; ustat batches)\" = 2/6 ]"
final=$(ids "$look")
kept=1
for t in $new_at_kill; do [[ " $final " == *" $t:1 "* ]] || kept=0; done
check "the tasks updated before the kill still run, not updated again ($new_at_kill)" test $kept = 1
low=$(awk '{ print NF }' "$T_DIR/samples" | sort -n | head -1)
check "the survivors never ran fewer than $((n_at_kill - 1)) ($n_at_kill at the kill less the batch in flight; lowest $low of $(wc -l <"$T_DIR/samples") samples)" \
	test "${low:-0}" -ge $((n_at_kill - 1))
old_left=$(s_ps "$look" up_web | jp 'sum(1 for t in j if t["state"] == "running" and not t["current"] and t["node"] != "'"$vid"'")')
check "no task of the old spec is left running on the survivors" test "$old_left" = 0
check "exactly 6 running on the survivors" test "$(wc -w <<<"$final")" = 6
t_done

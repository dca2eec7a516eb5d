# lib_sched.bash: sourced by the sched_*.sh and recon_*.sh acceptance suites — a scripts/cluster whose nodes run shims (real runc containers), the busybox image imported on every node, and JSON views of mtsctl service ls|ps, inspect and node inspect from any node.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/gossip_lib.sh"

# s_up N: a scratch directory, an N-node cluster with shims (schedd sized by
# MTS_CLUSTER_SCHEDD_CONF if set), every node seeing N alive members, the
# busybox image imported on each node. Ends the test when any step fails.
s_up() {
	local n=$1
	g_up_shims "$n" s_cleanup
	S_NODES=$n
	s_import busybox:latest
	# Owners place on the nodes whose d/ digest they hold; schedd writes
	# its d/ again when a member joins, so this takes a fraction of a
	# second (schedd_join.sh). Deploy as on a cluster up for a while.
	if ! wait_for 30 s_digests_everywhere; then
		fail "every node holds the $n d/ digests"
		t_done
	fi
	cd "$T_DIR" || exit 1
}

# s_import REF: an image made by scripts/mkimage as REF, imported on every
# node. Ends the test when that fails.
s_import() {
	local i dir=$T_DIR/image-${1//[:\/]/-}
	"$TOP/scripts/mkimage" --ref "$1" "$dir" >/dev/null ||
		{ fail "mkimage $1"; t_done; }
	for i in $(seq 1 "$S_NODES"); do
		g_ctl "$i" image import "$dir" >/dev/null ||
			{ fail "$1 imported on node $i"; t_done; }
	done
}

s_digests_everywhere() {
	local i
	for i in $(seq 1 "$S_NODES"); do
		[ "$(g_ctl "$i" state ls d/ | tail -n +2 | wc -l)" = "$S_NODES" ] || return 1
	done
}

# On a failure the agents' last words help: KEEP=1 keeps everything.
s_cleanup() {
	local i
	if [ "$T_FAILED" != 0 ] && [ -n "${MTS_CLUSTER_DIR:-}" ]; then
		for i in $(seq 1 "${S_NODES:-0}"); do
			for f in "$MTS_CLUSTER_DIR/n$i"/log/{reconciled,schedd}.log; do
				[ -f "$f" ] || continue
				echo "--- tail of $f"
				tail -n 15 "$f"
			done
		done
	fi
	g_down_purge_sched
	t_cleanup
}
g_down_purge_sched() {
	if [ "${KEEP:-0}" = 1 ]; then
		"$GOSSIP_CLUSTER" down >/dev/null 2>&1
	else
		"$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1
	fi
}

# s_ps I SERVICE: `service ps -o json` on node I ([] if it fails).
s_ps() { g_ctl "$1" -o json service ps "$2" 2>/dev/null || echo '[]'; }
# s_ls I: `service ls -o json` on node I.
s_ls() { g_ctl "$1" -o json service ls 2>/dev/null || echo '[]'; }

# s_running I SERVICE: how many tasks of SERVICE node I sees running.
s_running() {
	s_ps "$1" "$2" | jp 'sum(1 for t in j if t["state"] == "running")'
}
# s_running_is I SERVICE N: for wait_for.
s_running_is() { [ "$(s_running "$1" "$2")" = "$3" ]; }
# s_stays I SERVICE N K: K samples a second apart, each exactly N of
# SERVICE running in node I's view (a count that holds, not one that passed)
s_stays() {
	local _
	for _ in $(seq 1 "$4"); do
		[ "$(s_running "$1" "$2")" = "$3" ] || return 1
		sleep 1
	done
}
# s_records_gone I ID...: none of the task IDs has a record under t/ in
# node I's view any more (for wait_for; an ID may carry a ":slot" tail)
s_records_gone() {
	local i=$1 id ls
	shift
	ls=$(g_ctl "$i" state ls t/) || return 1
	for id; do
		grep -q "/${id%%:*}\$" <<<"$ls" && return 1
	done
	return 0
}

# s_per_node I SERVICE: "name=count ..." of the running tasks, by node name.
s_per_node() {
	s_ps "$1" "$2" | jp '" ".join("%s=%d" % (n, c) for n, c in sorted(__import__("collections").Counter(t["node_name"] for t in j if t["state"] == "running").items()))'
}

# s_all_agree SERVICE N: every node sees N running tasks of SERVICE, on the
# same nodes.
s_all_agree() {
	local i ref
	ref=$(s_per_node 1 "$1")
	[ "$(s_running 1 "$1")" = "$2" ] || return 1
	for i in $(seq 2 "$S_NODES"); do
		[ "$(s_per_node "$i" "$1")" = "$ref" ] || return 1
	done
}

# s_ustate SERVICE: the state of its update as node 1's service inspect
# says ("" with none).
s_ustate() {
	g_ctl 1 service inspect "$1" | jp 'j.get("update_status", {}).get("state", "")'
}

# s_owner I SERVICE: the owner node id that `service ls` shows on node I.
s_owner() {
	s_ls "$1" | jp 'next((s["owner"] for s in j if s["name"] == "'"$2"'"), "")'
}

# s_id_of NAME: node nI's id.
s_id_of() { g_id "${1#n}"; }
# s_name_of ID: the nI whose id is ID.
s_name_of() {
	local i
	for i in $(seq 1 "$S_NODES"); do
		[ "$(g_id "$i")" = "$1" ] && { echo "n$i"; return; }
	done
}

# s_stack NAME YAML: writes $T_DIR/NAME.yml.
s_stack() { printf '%s\n' "$2" >"$T_DIR/$1.yml"; }

# s_sampler I SERVICE OUT: in the background, every 200 ms until OUT.stop
# exists, node I's `service ps SERVICE` reduced to one line per sample in
# OUT: "<unix ms> <healthy> <running>" (tasks wanted running; healthy: its
# health check passes, or it has none and runs). S_SAMPLER is its pid.
s_sampler() {
	python3 - "$MTS_CLUSTER_DIR/n$1/run" "$2" "$3" "$BIN/mtsctl" <<'PY' &
import json, os, subprocess, sys, time
run, svc, out, ctl = sys.argv[1:5]
with open(out, "w") as f:
    while not os.path.exists(out + ".stop"):
        t0 = time.time()
        p = subprocess.run([ctl, "-r", run, "-o", "json", "service", "ps", svc],
                           capture_output=True, text=True)
        if p.returncode == 0:
            j = json.loads(p.stdout)
            live = [t for t in j if t["desired_state"] == "running" and t["state"] == "running"]
            h = sum(1 for t in live if t["health"] in ("healthy", ""))
            # then what each task of the service is, for the reader of a
            # dip: task@node:state/desired/health
            f.write("%d %d %d %s\n" % (t0 * 1000, h, len(live), ",".join(
                "%s@%s:%s/%s/%s" % (t["task"], t["node"], t["state"], t["desired_state"], t["health"] or "-")
                for t in sorted(j, key=lambda t: t["task"]))))
            f.flush()
        time.sleep(max(0, 0.2 - (time.time() - t0)))
PY
	S_SAMPLER=$!
}
# (each line of OUT: ms, healthy, running, then every task as
# task@node:state/desired/health)
# s_sampler_stop OUT: ends the sampler; prints "<samples> <lowest healthy>
# <lowest running>".
s_sampler_stop() {
	touch "$1.stop"
	wait "$S_SAMPLER" 2>/dev/null
	awk 'NR == 1 || $2 < h { h = $2 } NR == 1 || $3 < r { r = $3 }
	    END { printf "%d %d %d\n", NR, h, r }' "$1"
}

# tests/netns/lib_recon.bash: sourced by the netns suites that run services — a cluster in namespaces whose nodes run shims (real runc containers) with the busybox image on each, and views of a service's tasks as any node's replica holds them.
#
#   r_up N             N nodes (lib.sh's n_up with MTS_CLUSTER_SHIM=1),
#                      all alive, the image imported, every d/ digest on
#                      every node; ends the test on failure
#   r_tasks I SVC      "task node state desired" lines of SVC, node I's view
#   r_live I SVC [J..] SVC's tasks running and desired running in node I's
#                      view (on nodes J... only, if given)
#   r_idx ID           the node number whose id is ID
#   r_truth SVC        the tasks of SVC each node's own records say it
#                      runs (running, desired running), sorted
#   r_agree SVC N      r_truth lists N tasks and every node's view holds
#                      exactly those desired running
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v runc >/dev/null; then
	skip_all "needs runc"
fi

r_cleanup() {
	local i f
	if [ "$T_FAILED" != 0 ] && [ -n "${MTS_CLUSTER_DIR:-}" ]; then
		for i in $(seq 1 "${R_NODES:-0}"); do
			for f in "$MTS_CLUSTER_DIR/n$i"/log/reconciled.log; do
				[ -f "$f" ] || continue
				echo "--- tail of $f"
				tail -n 25 "$f"
			done
		done
	fi
	n_cleanup
}
trap r_cleanup EXIT
trap 'r_cleanup; exit 130' INT TERM HUP

r_digests() {
	local i
	for i in $(seq 1 "$R_NODES"); do
		[ "$(g_ctl "$i" state ls d/ | tail -n +2 | wc -l)" = "$R_NODES" ] || return 1
	done
}

r_up() {
	local n=$1 i
	export MTS_CLUSTER_SHIM=1
	R_NODES=$n
	if ! n_up "$n"; then
		cat "$T_DIR/up.log"
		fail "$n nodes with shims up in namespaces"
		t_done
	fi
	pass "$n nodes with shims up in namespaces"
	if ! wait_for 30 g_all_alive "$n" $(seq 1 "$n"); then
		fail "every node sees $n alive"
		t_done
	fi
	"$TOP/scripts/mkimage" "$T_DIR/bb" >/dev/null || { fail "mkimage"; t_done; }
	for i in $(seq 1 "$n"); do
		g_ctl "$i" image import "$T_DIR/bb" >/dev/null ||
			{ fail "busybox imported on node $i"; t_done; }
	done
	# owners place on the nodes whose d/ digest they hold (see lib_sched)
	if ! wait_for 40 r_digests; then
		fail "every node holds the $n d/ digests"
		t_done
	fi
}

r_idx() {
	local i
	for i in $(seq 1 "$R_NODES"); do
		[ "$(g_id "$i")" = "$1" ] && { echo "$i"; return 0; }
	done
	return 1
}

r_tasks() {
	g_ctl "$1" -o json service ps "$2" 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if not t["task"].endswith(".pending"):
        print(t["task"], t["node"], t["state"], t["desired_state"])'
}

r_live() {
	local i=$1 svc=$2 ids= j
	shift 2
	for j in "$@"; do ids="$ids $(g_id "$j")"; done
	r_tasks "$i" "$svc" | awk -v ids="$ids" '
	BEGIN { n = split(ids, a, " "); for (k = 1; k <= n; k++) want[a[k]] = 1 }
	$3 == "running" && $4 == "running" && (n == 0 || ($2 in want)) { c++ }
	END { print c + 0 }'
}

# r_owner I SVC: the owner's node id as node I's service ls names it
r_owner() {
	g_ctl "$1" -o json service ls 2>/dev/null | python3 -c '
import json, sys
print(next((s["owner"] for s in json.load(sys.stdin) if s["name"] == sys.argv[1]), ""))' "$2"
}

r_truth() {
	local i
	for i in $(seq 1 "$R_NODES"); do
		r_tasks "$i" "$1" | awk -v me="$(g_id "$i")" '$2 == me && $3 == "running" && $4 == "running" { print $1 }'
	done | sort
}

r_agree() {
	local t i v
	t=$(r_truth "$1")
	[ "$(echo "$t" | grep -c .)" = "$2" ] || return 1
	for i in $(seq 1 "$R_NODES"); do
		v=$(r_tasks "$i" "$1" | awk '$4 == "running" { print $1 }' | sort)
		[ "$v" = "$t" ] || return 1
	done
}

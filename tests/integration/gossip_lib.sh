# gossip_lib.sh: helpers for the gossip integration tests and benchmarks (sourced, not run): a cluster under scripts/cluster in a scratch dir.

GOSSIP_CLUSTER=$TOP/scripts/cluster

# g_up N: starts an N-node cluster in $T_DIR/cluster on ports scripts/cluster
# chooses free (g_port).
g_up() {
	export MTS_CLUSTER_DIR=$T_DIR/cluster
	unset MTS_CLUSTER_PORT
	chmod o+x "$T_DIR" # the sandboxed agents run as their own uids
	"$GOSSIP_CLUSTER" up "$1" >"$T_DIR/up.log" 2>&1
}
g_ctl() { "$GOSSIP_CLUSTER" ctl "$@"; }
g_run() { echo "$MTS_CLUSTER_DIR/n$1/run"; }
g_log() { echo "$MTS_CLUSTER_DIR/n$1/log/gossipd.log"; }
g_id() { cat "$MTS_CLUSTER_DIR/n$1/id"; }
g_port() { echo $(($(cat "$MTS_CLUSTER_DIR/port") + $1)); } # node I's port
g_down() { "$GOSSIP_CLUSTER" down >/dev/null 2>&1; }

# g_up_shims N [CLEANUP]: skips the suite unless root with runc; a scratch
# directory, an N-node cluster whose nodes run shims (real containers;
# MTS_CLUSTER_SHIM_CONF as the caller set it) and every node seeing N
# alive members. CLEANUP (default: g_down, t_cleanup) runs at exit. Ends
# the test when a step fails, with up.log and the shims' logs.
g_up_shims() {
	local n=$1
	if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
		skip_all "needs root and runc"
	fi
	t_tmpdir
	trap "${2:-g_down; t_cleanup}" EXIT
	export MTS_CLUSTER_SHIM=1
	if ! g_up "$n"; then
		fail "$n-node cluster with shims formed"
		cat "$T_DIR/up.log" "$MTS_CLUSTER_DIR"/n*/log/shim.log
		t_done
	fi
	pass "$n-node cluster with shims formed"
	if ! wait_for 20 g_all_alive "$n" $(seq 1 "$n"); then
		fail "every node sees $n alive members"
		t_done
	fi
}

# g_count_state I STATE: how many members node I reports in STATE.
g_count_state() {
	g_ctl "$1" -o json node ls 2>/dev/null |
		python3 -c 'import json,sys; print(sum(1 for n in json.load(sys.stdin) if n["state"]==sys.argv[1]))' "$2"
}

# g_state_of I ID: the state node I reports for node ID ("" if unknown).
g_state_of() {
	g_ctl "$1" -o json node ls 2>/dev/null |
		python3 -c 'import json,sys; print(next((n["state"] for n in json.load(sys.stdin) if n["id"].startswith(sys.argv[1])),""))' "$2"
}

g_all_alive() { # N NODES...: every listed node sees N alive members
	local n=$1 i
	shift
	for i in "$@"; do [ "$(g_count_state "$i" alive)" = "$n" ] || return 1; done
}

g_root() { g_ctl "$1" state root 2>/dev/null | awk '/^root:/ {print $2}'; }

g_roots_equal() { # NODES...
	local r0 i
	r0=$(g_root "$1")
	[ -n "$r0" ] || return 1
	for i in "$@"; do [ "$(g_root "$i")" = "$r0" ] || return 1; done
}

# g_final_check NODES...: equal roots and identical `state ls --hashes`.
g_final_check() {
	local i ref
	if ! wait_for 15 g_roots_equal "$@"; then
		fail "equal MST roots on nodes $*"
		for i in "$@"; do echo "  node $i: $(g_root "$i")"; done
		return
	fi
	pass "equal MST roots on nodes $*"
	ref=$(g_ctl "$1" state ls --hashes | sha256sum)
	for i in "$@"; do
		if [ "$(g_ctl "$i" state ls --hashes | sha256sum)" != "$ref" ]; then
			fail "state ls --hashes of node $i equals node $1's"
			return
		fi
	done
	pass "identical state ls --hashes on nodes $*"
}

g_stat() { # I FIELD
	g_ctl "$1" -o json cluster stats | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

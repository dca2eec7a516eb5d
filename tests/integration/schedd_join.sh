#!/usr/bin/env bash
# schedd_join.sh: a node's d/<node> digest, written before the node joined, reaches the members soon after the join — each schedd writes its digest again when a member becomes alive (without that, only anti-entropy brought it, about 9 s later, and early deploys placed on the nodes whose digest the owner had).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }
ST=$BUILD/tests/schedtool
LIMIT=4 # s after up (anti-entropy alone: 3.2-3.6 s at its 2 s default)
[[ $BUILD == *san* ]] && LIMIT=6

export MTS_CLUSTER_RECON=0
# anti-entropy rarely: what arrives in the first seconds came as a delta
export MTS_CLUSTER_CONF="ae_interval = 60s"
if ! g_up 3; then
	fail "3-node cluster with schedd formed"
	cat "$T_DIR/up.log"
	t_done
fi
t0=$(date +%s%N)
pass "3-node cluster with schedd formed"
ids="$(g_id 1) $(g_id 2) $(g_id 3)"
all_digests() { # I: node I holds the d/ of all 3 nodes
	local n
	for n in $ids; do
		"$ST" "$(g_run "$1")" - digest "$n" | grep -q '^cpu ' || return 1
	done
}
every_node() { all_digests 1 && all_digests 2 && all_digests 3; }
wait_for $((LIMIT + 5)) every_node
ms=$((($(date +%s%N) - t0) / 1000000))
echo "    every node held every node's d/ ${ms} ms after up"
check "every node holds every node's d/ within $LIMIT s of up ($ms ms)" [ "$ms" -lt $((LIMIT * 1000)) ]
for i in 1 2 3; do
	check "node $i's schedd wrote its digest again for the new members" \
		grep -q 'a member joined' "$MTS_CLUSTER_DIR/n$i/log/schedd.log"
done
t_done

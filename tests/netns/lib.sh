# tests/netns/lib.sh: what a netns test sources — a cluster whose nodes each run in a network namespace (scripts/cluster, MTS_CLUSTER_NETNS=1), partition/heal/isolate, and a cleanup that leaves no namespace, link or rule behind.
#
#   n_up N            N nodes up in $T_DIR/cluster, each in its namespace
#   partition A B...  groups of nodes (1,2 3,4,5) hear only themselves
#   isolate I         node I hears nobody, nobody hears it
#   heal              every link whole again
#   n_ns I, n_addr I  node I's namespace and address; n_in I CMD... runs
#                     CMD in node I's namespace
#   n_ns_of DIR       the namespaces scripts/cluster made for the cluster
#                     in DIR (none once it is down)
# The cluster (its processes, namespaces, veths and nftables rules) goes
# at exit, also when the test fails, is interrupted (INT, TERM, HUP) or
# dies half-way; a run killed outright (SIGKILL) leaves its namespaces to
# the next `scripts/cluster up`, which reaps those whose directory is gone.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$TOP/tests/integration/gossip_lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (network namespaces)"
command -v nft >/dev/null || skip_all "needs nft (nftables; scripts/install-deps)"
command -v nsenter >/dev/null || skip_all "needs nsenter"

t_tmpdir
chmod o+x "$T_DIR" # the sandboxed agents run as their own uids
export MTS_CLUSTER_DIR=$T_DIR/cluster MTS_CLUSTER_NETNS=1
unset MTS_CLUSTER_PORT

n_cleanup() {
	trap - EXIT INT TERM HUP
	"$GOSSIP_CLUSTER" down >/dev/null 2>&1
	t_cleanup
}
trap n_cleanup EXIT
trap 'n_cleanup; exit 130' INT TERM HUP

n_up() { g_up "$1"; }
partition() { "$GOSSIP_CLUSTER" partition "$@"; }
isolate() { "$GOSSIP_CLUSTER" isolate "$@"; }
heal() { "$GOSSIP_CLUSTER" heal; }
n_ns() { "$GOSSIP_CLUSTER" netns "$1"; }
n_addr() { "$GOSSIP_CLUSTER" addr "$1"; }
n_ns_of() {
	local t; t=mts$(printf %s "$1" | cksum | cut -d' ' -f1)
	ip netns list | awk '{print $1}' | grep -E "^$t-(hub|n[0-9]+)$"
}
n_in() { local ns; ns=$(n_ns "$1") || return 1; shift; nsenter --net="/run/netns/$ns" "$@"; }

# n_reach I J: node I's namespace can open a TCP connection to node J's
# gossipd within half a second.
n_reach() {
	n_in "$1" timeout 0.5 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$(n_addr "$2")" "$(g_port "$2")" 2>/dev/null
}

#!/usr/bin/env bash
# tests/netns/netns_tools.sh: the namespace tooling itself — nodes in namespaces of their own behind one bridge, partition/isolate/heal cutting and restoring exactly the links they name, `client` reaching every node from the hub, nothing added to the host's namespace, two clusters side by side, a cluster's MTS_CLUSTER_NETNS_NET kept for later commands, and no namespace left behind by down, a failed up, an interrupted test or a run whose directory vanished.
. "$(dirname "$0")/lib.sh"

# host_clean: nothing of ours in the host's namespace (others' links and
# rules come and go: engineers share the machine)
host_clean() {
	! ip -o addr | grep -q ' 10\.77\.0\.' &&
		! ip route | grep -q '^10\.77\.0\.' &&
		! ip -o link | grep -qE ': (vn[0-9]+|br0)[:@]' &&
		! nft list tables 2>/dev/null | grep -q mtscut
}

n_up 3 || { cat "$T_DIR/up.log"; fail "3 nodes up in namespaces"; t_done; }
pass "3 nodes up in namespaces"
check "each node in its own namespace (3 nodes + the hub)" \
	test "$(n_ns_of "$MTS_CLUSTER_DIR" | wc -l)" = 4
check "node 2 listens on its namespace's address" \
	eval 'g_ctl 1 node ls | grep -q " $(n_addr 2):$(g_port 2) "'
check "node 3's namespace has only lo and eth0" \
	test "$(n_in 3 ip -o link | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | tr '\n' ' ')" = "eth0 lo "
check "ctl works from the host: every node sees 3 alive" wait_for 10 g_all_alive 3 1 2 3
# client_reach J: the client (the hub, outside the cluster) opens a TCP
# connection to node J's gossipd
client_reach() {
	"$GOSSIP_CLUSTER" client timeout 0.5 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$(n_addr "$1")" "$(g_port "$1")" 2>/dev/null
}
check "client: a machine at $("$GOSSIP_CLUSTER" addr client) outside the cluster reaches nodes 1, 2 and 3" \
	eval 'client_reach 1 && client_reach 2 && client_reach 3'
check "... from the hub's namespace: the address is on its br0" \
	eval 'ip -n "$(n_ns 1 | sed "s/-n1\$/-hub/")" -o addr show br0 | grep -q " $("$GOSSIP_CLUSTER" addr client)/24 "'
check "the host's namespace has none of the cluster's links, addresses, routes, rules" host_clean
check "before any cut: 1 reaches 2 and 3" eval 'n_reach 1 2 && n_reach 1 3'

partition 1 2,3
check "partition 1 | 2,3: 1 no longer reaches 2 nor 3" eval '! n_reach 1 2 && ! n_reach 1 3'
check "... 2 and 3 do not reach 1" eval '! n_reach 2 1 && ! n_reach 3 1'
check "... 2 and 3 still reach each other" eval 'n_reach 2 3 && n_reach 3 2'
partition 1,2 3
check "a new partition replaces the old: 1 reaches 2 again, not 3" eval 'n_reach 1 2 && ! n_reach 1 3'
heal
check "heal: every pair reaches again" eval 'n_reach 1 2 && n_reach 1 3 && n_reach 2 3 && n_reach 3 1'
isolate 2
check "isolate 2: 2 reaches nobody, nobody reaches 2" \
	eval '! n_reach 2 1 && ! n_reach 2 3 && ! n_reach 1 2 && ! n_reach 3 2'
check "... 1 and 3 still talk" eval 'n_reach 1 3 && n_reach 3 1'
check "isolate 2: node 1 declares node 2 dead" \
	wait_for 20 eval '[ "$(g_state_of 1 "$(g_id 2)")" = dead ]'
heal
check "partition with an unknown node is refused" eval '! partition 1 7 2>/dev/null'
check "partition with a node in two groups is refused" eval '! partition 1,2 2,3 2>/dev/null'

# a second cluster at once, same addresses, its own bridge
B=$T_DIR/b
MTS_CLUSTER_DIR=$B "$GOSSIP_CLUSTER" up 2 >"$T_DIR/b.log" 2>&1
check "a second netns cluster comes up beside the first" test $? = 0
check "... its nodes use the same addresses, in namespaces of their own" \
	eval 'MTS_CLUSTER_DIR=$B "$GOSSIP_CLUSTER" ctl 1 node ls | grep -q " $(n_addr 2):"'
check "... and see only their own 2 members" \
	eval '[ "$(MTS_CLUSTER_DIR=$B "$GOSSIP_CLUSTER" ctl 1 -o json node ls | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")" = 2 ]'
MTS_CLUSTER_DIR=$B "$GOSSIP_CLUSTER" down --purge
check "down removes the second cluster's namespaces" test -z "$(n_ns_of "$B")"

# an up that fails half-way removes its namespaces
C=$T_DIR/c
MTS_CLUSTER_DIR=$C MTS_BIN=$T_DIR/nobin "$GOSSIP_CLUSTER" up 2 >"$T_DIR/c.log" 2>&1
check "an up that fails (no binaries) exits non-zero" test $? != 0
check "... and leaves no namespace" test -z "$(n_ns_of "$C")"

# a test interrupted with SIGTERM cleans up through lib.sh
cat >"$T_DIR/child.sh" <<CHILD
#!/usr/bin/env bash
. "$TOP/tests/netns/lib.sh"
n_up 2 || exit 1
partition 1 2
echo "\$MTS_CLUSTER_DIR" >"$T_DIR/child.dir"
sleep 60 & wait \$!  # a foreground sleep would hold the trap back
CHILD
chmod +x "$T_DIR/child.sh"
KEEP=0 "$T_DIR/child.sh" >"$T_DIR/child.log" 2>&1 &
cpid=$!
wait_for 30 test -s "$T_DIR/child.dir"
cdir=$(cat "$T_DIR/child.dir" 2>/dev/null)
check "the interrupted test had its namespaces" test -n "$cdir" -a -n "$(n_ns_of "$cdir")"
kill -TERM $cpid
wait $cpid
check "SIGTERM: its namespaces are gone" test -z "$(n_ns_of "$cdir")"
check "... and its directory and processes" eval '! test -d "$cdir" && ! pgrep -f "$cdir/" >/dev/null'

# a run killed outright: the next up reaps what its vanished directory left
D=$T_DIR/d
MTS_CLUSTER_DIR=$D "$GOSSIP_CLUSTER" up 1 >"$T_DIR/d.log" 2>&1
MTS_CLUSTER_DIR=$D "$GOSSIP_CLUSTER" kill 1
rm -rf "$D"
check "a vanished directory's namespaces are there before the next up" test -n "$(n_ns_of "$D")"
E=$T_DIR/e
MTS_CLUSTER_DIR=$E MTS_CLUSTER_NETNS_NET=10.78.0 "$GOSSIP_CLUSTER" up 1 >"$T_DIR/e.log" 2>&1
check "... and reaped by it" test -z "$(n_ns_of "$D")"
check "a cluster up on MTS_CLUSTER_NETNS_NET=10.78.0: later commands use it without the variable" \
	eval '[ "$(MTS_CLUSTER_DIR=$E "$GOSSIP_CLUSTER" addr 1)" = 10.78.0.1 ] &&
	    [ "$(MTS_CLUSTER_DIR=$E "$GOSSIP_CLUSTER" addr client)" = 10.78.0.254 ]'
MTS_CLUSTER_DIR=$E "$GOSSIP_CLUSTER" down --purge

dir=$MTS_CLUSTER_DIR
"$GOSSIP_CLUSTER" down
check "down removes every namespace (nodes and hub)" test -z "$(n_ns_of "$dir")"
check "the host's namespace is still clean" host_clean
t_done

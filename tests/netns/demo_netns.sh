#!/usr/bin/env bash
# demo_netns.sh: `make demo`'s script where the machine allows network namespaces (each node in its own, mts-netd's WireGuard overlay through wireguard-go, real containers), in scratch cluster directories: a web task on another node answers http://web:8080/ and http://web.demo.mts:8080/ from the agent task of a node that runs no web task, port 8080 answers on every node (that one included) for a client outside the cluster, the cluster keeps running and the demo says how to stop it, in under 2 minutes; a second demo on the same directory meanwhile is refused; and a demo at the same time whose names cannot resolve (its nodes' DNS servers on another port) fails there, saying so, and leaves no process, namespace or mount.
. "$(dirname "$0")/lib.sh"
CLUSTER=$TOP/scripts/cluster
why=$("$CLUSTER" can shim netns netd 2>&1)
rc=$?
[ $rc = 1 ] && skip_all "$why"
[ $rc = 0 ] || { fail "scripts/cluster can shim netns netd: exit $rc"; t_done; }
command -v curl >/dev/null || skip_all "needs curl"
unset MTS_CLUSTER_NETNS # the demo chooses (lib.sh exports it)
BAD=$T_DIR/bad
cleanup() {
	trap - EXIT INT TERM HUP
	MTS_CLUSTER_DIR=$BAD "$CLUSTER" down >/dev/null 2>&1
	n_cleanup
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP

# both at once: the good demo in $MTS_CLUSTER_DIR, the bad one beside it
MTS_CLUSTER_DIR=$BAD MTS_CLUSTER_NETD_CONF="dns_port = 5399" "$TOP/scripts/demo" >"$T_DIR/bad.out" 2>&1 &
BADPID=$!
t0=$SECONDS
"$TOP/scripts/demo" >"$T_DIR/demo.out" 2>&1 &
GOOD=$!
wait_for 60 grep -q '^cluster of 3 nodes up' "$T_DIR/demo.out"
"$TOP/scripts/demo" >"$T_DIR/second.out" 2>&1
rc=$?
check "a second demo on the same directory meanwhile is refused ($rc)" \
	sh -c "[ $rc = 75 ] && grep -q 'another demo is running in $MTS_CLUSTER_DIR' '$T_DIR/second.out'"
wait $GOOD
rc=$?
took=$((SECONDS - t0))
check "scripts/demo exits 0 ($rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/    /' "$T_DIR/demo.out"
check "it took under 2 minutes (${took} s, beside the other demo)" [ $took -lt 120 ]
has() { grep -q -- "$1" "$T_DIR/demo.out"; }
check "its nodes are in namespaces, with netd (no loopback line)" \
	sh -c "grep -q '^cluster of 3 nodes up .*(namespaces ' '$T_DIR/demo.out' && ! grep -q 'nodes on loopback' '$T_DIR/demo.out'"
check "demo_web scaled to 2" has 'ctl 2 service scale demo_web=2'

# web_node TASK: the node (n1..n3) of a running demo_web task, "" if none
web_node() {
	"$CLUSTER" ctl 1 -o json service ps demo_web | python3 -c '
import json, sys
print(next((t["node_name"] for t in json.load(sys.stdin) if t["task"] == sys.argv[1] and t["state"] == "running"), ""))' "$1"
}
web_nodes() { "$CLUSTER" ctl 1 -o json service ps demo_web | python3 -c '
import json, sys; print(" ".join(sorted(t["node_name"] for t in json.load(sys.stdin) if t["state"] == "running")))'; }
# fetched CMD-END: "E TASK" — the node in the printed `ctl E exec` (or
# nothing for client) and the task in the page printed after the command
# line ending in CMD-END
fetched() {
	awk -v u="$1" '$1 == "$" && $NF == u { e = ($3 == "ctl") ? $4 : "-"; getline; if ($1 == "hello" && $2 == "from") print e, $3; exit }' "$T_DIR/demo.out"
}
check "demo_web runs on 2 nodes at the end ($(web_nodes))" [ "$(web_nodes | wc -w)" = 2 ]
for url in http://web:8080/ http://web.demo.mts:8080/; do
	read -r e task < <(fetched "$url")
	n=$(web_node "${task:-none}")
	check "$url from node ${e:-?}'s agent task: answered by ${task:-nothing}, a web task on another node (${n:-none})" \
		sh -c "[ -n '$n' ] && [ '$n' != 'n$e' ]"
	check "... node ${e:-?} runs no web task" sh -c "[ -n '$e' ] && ! echo ' $(web_nodes) ' | grep -q ' n$e '"
	E=$e
done
for i in 1 2 3; do
	url="http://$("$CLUSTER" addr "$i"):8080/"
	read -r _ task < <(fetched "$url")
	n=$(web_node "${task:-none}")
	what=
	[ "$i" = "${E:-}" ] && what=" (which runs no web task)"
	check "port 8080 of node $i$what answered the client: ${task:-nothing} (on ${n:-none})" [ -n "$n" ]
done
page=$("$CLUSTER" client curl -s -m 5 "http://$("$CLUSTER" addr "${E:-1}"):8080/")
check "and still does after the demo: $page" sh -c "echo '$page' | grep -q '^hello from demo_web\.'"
check "the cluster keeps running" sh -c "[ \"\$('$CLUSTER' status | grep -c ': running')\" = 3 ]"
check "it says how to stop it" has 'scripts/cluster down --purge'
check "... and how to fetch a node's port from outside" has 'scripts/cluster client curl'

# the demo whose names do not resolve
wait $BADPID
rc=$?
check "the demo whose nodes' DNS servers are elsewhere fails ($rc)" [ $rc != 0 ]
check "... at the name, saying so" grep -q 'demo: http://web:8080/ did not answer' "$T_DIR/bad.out"
check "... and that it takes its cluster down" grep -q 'stopped half-way: taking the cluster down' "$T_DIR/bad.out"
[ $rc != 0 ] && grep -q 'did not answer' "$T_DIR/bad.out" || sed 's/^/    /' "$T_DIR/bad.out"
check "... leaving no process" test -z "$(t_procs "$BAD")"
check "... no namespace" test -z "$(n_ns_of "$BAD")"
check "... no mount" sh -c "! grep -q ' $BAD/' /proc/mounts"
check "... and its logs" test -s "$BAD/n1/log/netd.log"
check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n*/log/init.log"
t_done

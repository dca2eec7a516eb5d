#!/usr/bin/env bash
# demo_run.sh: `make demo`'s script in a scratch cluster directory, on a PATH without wireguard-go, so that its nodes stay on loopback (tests/netns/demo_netns.sh runs it in network namespaces) — config/examples/demo.yaml loads without a warning, the demo says in one line why it uses loopback, exits 0 after showing service ls, service ps and a node-1 task's logs read on node 3 (where reconciled runs: 6/6 web replicas healthy on all 3 nodes from an image imported on node 1 only, one agent per node), and ends with how to explore and stop.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] && command -v runc >/dev/null || skip_all "needs root and runc"
t_tmpdir
export MTS_CLUSTER_DIR=$T_DIR/cluster
trap '"$TOP/scripts/cluster" down --purge >/dev/null 2>&1; t_cleanup' EXIT
chmod o+x "$T_DIR"

out=$("$BIN/mtsctl" stack config -c "$TOP/config/examples/demo.yaml" 2>&1 >/dev/null)
check "demo.yaml loads without a warning or error" test $? -eq 0 -a -z "$out"

PATH=$(t_path_without wireguard-go) "$TOP/scripts/demo" >"$T_DIR/demo.out" 2>&1
rc=$?
check "scripts/demo exits 0 ($rc)" test $rc -eq 0
[ $rc -eq 0 ] || sed 's/^/    /' "$T_DIR/demo.out"
has() { grep -q -- "$1" "$T_DIR/demo.out"; }
check "one line says why the nodes are on loopback" \
	test "$(grep -c '^demo: nodes on loopback, not in network namespaces with the overlay: needs .*wireguard-go' "$T_DIR/demo.out")" = 1
check "... and they are" grep -q '^cluster of 3 nodes up in .*(ports ' "$T_DIR/demo.out"
check "it shows 3 alive members" test "$(grep -c ' alive ' "$T_DIR/demo.out")" -ge 3
check "it deploys the stack from node 1" has 'ctl 1 deploy -c .*config/examples/demo.yaml'
check "it shows service ls on node 2" has 'ctl 2 service ls'
if has 'no mts-reconciled yet'; then
	check "without reconciled: service ls lists demo_web 0/6" grep -Eq '^demo_web +replicated +0/6' "$T_DIR/demo.out"
	check "... and the containers part runs" has 'hello from a container on demo'
else
	check "service ls: demo_web 6/6" grep -Eq '^demo_web +replicated +6/6 ' "$T_DIR/demo.out"
	check "service ls: demo_agent 3/3 (one per node)" grep -Eq '^demo_agent +global +3/3 ' "$T_DIR/demo.out"
	check "service ps demo_web on node 3: 6 running and healthy" \
		test "$(grep -Ec ' running +healthy ' "$T_DIR/demo.out")" -ge 6
	check "... on all 3 nodes, though only node 1 imported the image" \
		bash -c "grep -Eq '^demo_web\.[^ ]+ +([0-9]+ +)?n2 ' '$T_DIR/demo.out' && grep -Eq '^demo_web\.[^ ]+ +([0-9]+ +)?n3 ' '$T_DIR/demo.out'"
	check "a node-1 task's logs read on node 3: its start line" has '^web .* serving /var/www on :8080'
	check "... and the health probes it answered" has 'url:/'
fi
check "it says how to scale, label, kill a node" bash -c "grep -q 'service scale demo_web' '$T_DIR/demo.out' && grep -q 'node label add' '$T_DIR/demo.out' && grep -q 'scripts/cluster kill 3' '$T_DIR/demo.out'"
check "... and how to stop" has 'scripts/cluster down --purge'
t_done

#!/usr/bin/env bash
# cluster_script.sh: scripts/cluster — two clusters up at once on free ports of their own, `converged` telling equal roots from a node that has not caught up, an `up` that fails half-way leaving nothing running, and `can` saying what the machine lacks for a mode.
. "$(dirname "$0")/../lib.sh"
CLUSTER=$TOP/scripts/cluster
t_tmpdir
chmod o+x "$T_DIR" # the sandboxed agents run as their own uids
A=$T_DIR/a B=$T_DIR/b C=$T_DIR/c
down_all() { local d; for d in "$A" "$B" "$C"; do MTS_CLUSTER_DIR=$d "$CLUSTER" down >/dev/null 2>&1; done; }
trap 'down_all; t_cleanup' EXIT
unset MTS_CLUSTER_PORT

ctl() { local d=$1; shift; MTS_CLUSTER_DIR=$d "$CLUSTER" ctl "$@"; }

# --- two clusters at once, each on free ports it recorded ---
MTS_CLUSTER_DIR=$A "$CLUSTER" up 2 >"$T_DIR/a.log" 2>&1 &
pa=$!
MTS_CLUSTER_DIR=$B "$CLUSTER" up 2 >"$T_DIR/b.log" 2>&1 &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
check "two clusters come up at the same time" [ $ra = 0 -a $rb = 0 ]
[ $ra = 0 -a $rb = 0 ] || cat "$T_DIR/a.log" "$T_DIR/b.log"
porta=$(cat "$A/port" 2>/dev/null) portb=$(cat "$B/port" 2>/dev/null)
check "each recorded its base port" [ -n "$porta" -a -n "$portb" ]
check "... and they differ by at least a node range" \
	[ $((porta > portb ? porta - portb : portb - porta)) -ge 9 ]
check "node 2 of each listens on base+2 (node ls)" eval \
	'ctl "$A" 1 node ls | grep -q "127.0.0.1:$((porta + 2)) " &&
	 ctl "$B" 1 node ls | grep -q "127.0.0.1:$((portb + 2)) "'
check "the port range is claimed for the cluster directory" \
	grep -qx "9 $A" "/tmp/mts-ports/$porta"

# --- converged ---
check "converged: equal roots reported as agreeing" \
	eval 'MTS_CLUSTER_DIR=$A "$CLUSTER" converged 10 | grep -q "^all replicas agree"'
gpid=$(ctl "$A" 2 agent ls | awk '$1 == "gossipd" {print $3}')
kill -STOP "$gpid"
ctl "$A" 1 state put demo/k v >/dev/null
out=$(MTS_CLUSTER_DIR=$A "$CLUSTER" converged 2)
rc=$?
check "converged: a node that has not caught up is not reported as agreeing" [ $rc = 1 ]
check "... the lagging node is named" grep -q "not converged yet after 2s: node(s) 2 differ" <<<"$out"
echo "$out" | sed 's/^/  /'
kill -CONT "$gpid"
check "converged: agreeing again once it caught up" \
	eval 'MTS_CLUSTER_DIR=$A "$CLUSTER" converged 20 >/dev/null'

# --- down --purge releases everything ---
MTS_CLUSTER_DIR=$A "$CLUSTER" down --purge
MTS_CLUSTER_DIR=$B "$CLUSTER" down --purge
check "down --purge: no process of either cluster left" test -z "$(t_procs "$A")$(t_procs "$B")"
check "down --purge: the port claims are released" \
	test ! -e "/tmp/mts-ports/$porta" -a ! -e "/tmp/mts-ports/$portb"

# --- an up that fails half-way stops what it started ---
mkdir -p "$C"
base=$("$TOP/scripts/freeport" 3 "$C")
python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
print("ready", flush=True)
time.sleep(120)' $((base + 2)) >"$T_DIR/blocker" &
T_PIDS+=($!)
wait_for 5 grep -q ready "$T_DIR/blocker"
MTS_CLUSTER_DIR=$C MTS_CLUSTER_PORT=$base "$CLUSTER" up 3 >"$T_DIR/c.log" 2>&1
rc=$?
check "up fails when node 2 cannot listen" [ $rc -ne 0 ]
check "... says it stops the nodes it started" grep -q "up failed: stopping node(s) 1 2" "$T_DIR/c.log"
check "... and leaves no process of the cluster running" test -z "$(t_procs "$C")"
check "... and keeps the logs" test -s "$C/n1/log/gossipd.log"
MTS_CLUSTER_DIR=$C MTS_CLUSTER_PORT=$base "$CLUSTER" start 2 >"$T_DIR/c2.log" 2>&1
rc=$?
check "start of a node that cannot listen fails" [ $rc -ne 0 ]
check "... and leaves none of its processes running" test -z "$(t_procs "$C")"

# --- can MODE...: what the machine lacks ---
if [ "$(id -u)" -eq 0 ]; then
	# a PATH of everything the machine has but wireguard-go and runc
	path=$(t_path_without wireguard-go runc)
	out=$(PATH=$path "$CLUSTER" can shim netns netd)
	rc=$?
	check "can shim netns netd without wireguard-go and runc: exit 1, 'needs runc and wireguard-go' ($out)" \
		[ $rc = 1 -a "$out" = "needs runc and wireguard-go" ]
	# ... and an id that says uid 1000
	rm -f "$path/id"
	printf '#!/bin/sh\necho 1000\n' >"$path/id"
	chmod +x "$path/id"
	out=$(PATH=$path "$CLUSTER" can netns shim)
	check "... not as root: 'needs root and runc' ($out)" [ "$out" = "needs root and runc" ]
	if command -v ip >/dev/null && command -v nft >/dev/null && command -v nsenter >/dev/null; then
		out=$("$CLUSTER" can netns)
		check "can netns here (root, ip, nft, nsenter): exit 0, nothing printed" [ $? = 0 -a -z "$out" ]
	fi
fi
"$CLUSTER" can bogus 2>/dev/null
check "can of an unknown mode: usage, exit 2" [ $? = 2 ]
t_done

#!/usr/bin/env bash
# gossip_sandbox.sh: scripts/cluster runs gossipd and the statestore sandboxed — own non-root uids, seccomp filters, no_new_privs — and the cluster still forms, replicates and survives a gossipd restart without a SIGSYS.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }

UIDBASE=64200 # scripts/cluster's default: node I uses UIDBASE+10*I+{0,1,2}
export MTS_CLUSTER_UID=$UIDBASE
if ! g_up 3; then
	fail "3-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed"

pid_of() { g_ctl "$1" agent ls | awk -v a="$2" '$1 == a {print $3}'; }
status() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }

for i in 1 2 3; do
	want_g=$((UIDBASE + 10 * i + 2)) want_s=$((UIDBASE + 10 * i + 1))
	gp=$(pid_of "$i" gossipd)
	sp=$(pid_of "$i" statestore)
	if [ -z "$gp" ] || [ -z "$sp" ]; then
		fail "node $i: gossipd and statestore pids from agent ls"
		continue
	fi
	check "node $i: gossipd runs as uid $want_g (real, effective, saved)" \
		[ "$(status "$gp" Uid | awk '{print $1, $2, $3}')" = "$want_g $want_g $want_g" ]
	check "node $i: gossipd has no root group" \
		bash -c "! sed -n 's/^Groups://p' /proc/$gp/status | grep -qw 0"
	check "node $i: gossipd Seccomp: 2" [ "$(status "$gp" Seccomp)" = 2 ]
	check "node $i: gossipd NoNewPrivs: 1" [ "$(status "$gp" NoNewPrivs)" = 1 ]
	check "node $i: gossipd has no capabilities" [ "$(status "$gp" CapEff)" = 0000000000000000 ]
	check "node $i: statestore runs as uid $want_s" \
		[ "$(status "$sp" Uid | awk '{print $1}')" = "$want_s" ]
	check "node $i: statestore Seccomp: 2" [ "$(status "$sp" Seccomp)" = 2 ]
done

check "3 alive members on every node" wait_for 10 g_all_alive 3 1 2 3
check "root's mtsctl writes on node 1" eval 'g_ctl 1 state put sandbox/k v1 >/dev/null'
check "the write is readable on node 3" \
	wait_for 10 bash -c "[ \"\$('$GOSSIP_CLUSTER' ctl 3 state get --value sandbox/k 2>/dev/null)\" = v1 ]"

# a gossipd restart (SIGTERM, exit, start-up, rejoin) stays inside the policy
gp=$(pid_of 2 gossipd)
check "gossipd restarts on node 2" eval 'g_ctl 2 agent restart gossipd >/dev/null'
check "node 2's gossipd comes back with a new pid" \
	wait_for 10 bash -c "p=\$('$GOSSIP_CLUSTER' ctl 2 agent ls | awk '\$1 == \"gossipd\" && \$2 == \"up\" {print \$3}'); [ -n \"\$p\" ] && [ \"\$p\" != $gp ]"
check "its previous run exited 0" \
	bash -c "'$GOSSIP_CLUSTER' ctl 2 agent ls | grep -q '^gossipd .* exit 0\$'"
# Peers that saw node 2 go may be in reconnect backoff (reconnect_max 5 s)
# and the rejoin rides on SWIM probes: allow a few backoff periods.
check "the cluster is whole again" wait_for 30 g_all_alive 3 1 2 3
check "root's mtsctl writes on node 3" eval 'g_ctl 3 state put sandbox/k2 v2 >/dev/null'
check "the write reaches node 2" \
	wait_for 10 bash -c "[ \"\$('$GOSSIP_CLUSTER' ctl 2 state get --value sandbox/k2 2>/dev/null)\" = v2 ]"

logs=("$MTS_CLUSTER_DIR"/n*/log/*.log)
check "no agent died of SIGSYS (${#logs[@]} logs)" \
	bash -c '! grep -E "SIGSYS|signal 31" "$@"' _ "${logs[@]}"
no_restarts() { # I: no agent of node I was restarted after a crash
	g_ctl "$1" agent ls | awk 'NR > 1 && $5 != 0 {bad = 1} END {exit bad}'
}
if no_restarts 1 && no_restarts 2 && no_restarts 3; then
	pass "no agent restarted after a crash"
else
	fail "no agent restarted after a crash"
	# say which one and why: the cluster directory goes at exit
	for i in 1 2 3; do
		g_ctl "$i" agent ls | sed "s/^/  node $i: /"
		g_ctl "$i" agent ls | awk 'NR > 1 && $5 != 0 {print $1}' |
		    while read -r a; do
			tail -15 "$MTS_CLUSTER_DIR/n$i/log/$a.log" 2>/dev/null |
			    sed "s/^/  n$i $a.log: /"
		done
	done
fi
t_done

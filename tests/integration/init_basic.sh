#!/usr/bin/env bash
# init_basic.sh: mts-init starts agents in dependency order under their own ids, with no_new_privs, seccomp and exactly their capabilities; restarts a killed agent; stops everything on SIGTERM.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
cat >>"$T_DIR/mts.conf" <<EOF
[alpha]
executable = $TA
user = 64101
group = 64111
capabilities = net_bind_service, CAP_NET_ADMIN
seccomp = $POLICY
restart_delay = 50ms

[beta]
executable = $TA
user = 64102
args = -s beta.sock
seccomp = $POLICY
after = alpha

[gamma]
executable = $TA
user = 64103
args = -s gamma.sock -x orphan
EOF
it_start
check "all agents up" wait_for 10 it_all_up
la=$(grep -n 'agent alpha: ready' "$T_DIR/init.log" | cut -d: -f1)
lb=$(grep -n 'agent beta: started' "$T_DIR/init.log" | cut -d: -f1)
check "alpha ready before beta starts" test "${la:-9999}" -lt "${lb:-0}"
pa=$(it_field alpha pid)
pb=$(it_field beta pid)
check "alpha uid" test "$(it_status "$pa" Uid)" = "64101	64101	64101	64101"
check "alpha gid" test "$(it_status "$pa" Gid)" = "64111	64111	64111	64111"
check "alpha groups: only the admin group" test "$(it_status "$pa" Groups)" = "$ADMIN_GID"
check "beta uid and gid" test "$(it_status "$pb" Uid)/$(it_status "$pb" Gid)" = "64102	64102	64102	64102/64102	64102	64102	64102"
for p in $pa $pb; do
	check "pid $p NoNewPrivs 1" test "$(it_status "$p" NoNewPrivs)" = 1
	check "pid $p Seccomp 2" test "$(it_status "$p" Seccomp)" = 2
done
# net_admin = bit 12, net_bind_service = bit 10
for f in CapEff CapPrm CapInh CapAmb CapBnd; do
	check "alpha $f = net_admin+net_bind_service" test "$(it_status "$pa" $f)" = 0000000000001400
	check "beta $f empty" test "$(it_status "$pb" $f)" = 0000000000000000
done
check "agent ls shows seccomp on" test "$(it_field alpha seccomp)" = on
check "agent ls shows user" test "$(it_field beta user)" = 64102
check "state dir owned by the agent, 0700" test "$(stat -c %u:%a "$STATE/alpha")" = 64101:700
check "admin.sock 0660 root:admin group" test "$(stat -c %a:%u:%g "$RUN/init/admin.sock")" = "660:0:$ADMIN_GID"
check "run dir root's alone, admin group may enter" test "$(stat -c %a:%u:%g "$RUN")" = "750:0:$ADMIN_GID"
check "agent's socket dir its own, setgid admin group" test "$(stat -c %a:%u:%g "$RUN/alpha")" = "2750:64101:$ADMIN_GID"
check "init's socket dir root's" test "$(stat -c %a:%u:%g "$RUN/init")" = "2750:0:$ADMIN_GID"
env=$(tr "\0" "\n" <"/proc/$pa/environ" | cut -d= -f1 | grep -v "^ASAN_OPTIONS$" | sort | tr "\n" " ")
check "clean environment" test "$env" = "MTS_AGENT MTS_CONFIG MTS_NODE MTS_NODE_ID MTS_NOTIFY_FD MTS_RUNDIR MTS_SECCOMP_FD MTS_STATEDIR PATH "
# No fd of init's in an agent: admin.sock, or init's signalfd. The agent
# runs its own loop (an epoll set, a signalfd for SIGTERM, SIGINT and
# SIGHUP): init's is the signalfd that also takes SIGCHLD (bit 16).
takes_sigchld() { # pid
	local m
	for m in $(sed -n 's/^sigmask:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null); do
		(((16#$m >> 16) & 1)) && return 0
	done
	return 1
}
check "init's signalfd is the one that takes SIGCHLD" takes_sigchld "$INIT_PID"
no_init_fd() { # pid
	! ls -l /proc/"$1"/fd | grep -q admin.sock && ! takes_sigchld "$1"
}
check "no fd of init leaked (admin.sock, init's signalfd)" no_init_fd "$pa"
check "seccomp fd closed after use" bash -c "! ls -l /proc/$pa/fd | grep -q memfd"

# SIGKILL: back and serving within 1 s.
# (alpha plays a statestore in its own socket directory)
SS=$BUILD/tests/sstool
"$SS" "$RUN/alpha/statestore.sock" put k v >/dev/null
serving() { [ "$(it_field alpha pid)" != "$pa" ] && [ "$(it_field alpha state)" = up ] && "$SS" "$RUN/alpha/statestore.sock" root >/dev/null 2>&1; }
t0=$(date +%s%N)
kill -9 "$pa"
wait_for 3 serving
ms=$((($(date +%s%N) - t0) / 1000000))
echo "restart after SIGKILL: ${ms} ms"
# Sanitizer builds start every process several times slower.
limit=1000
[[ $BUILD == *san* ]] && limit=3000
check "killed agent back and serving within $limit ms" test "$ms" -lt $limit
check "restart counted" test "$(it_field alpha restarts)" = 1
check "last exit shows SIGKILL" grep -q SIGKILL <<<"$(it_field alpha last_exit)"

check "gamma left a process in another session" test "$(pgrep -u 64103 | wc -l)" -ge 2
# SIGTERM to init: everything stops, dependants first, nothing left.
pa=$(it_field alpha pid)
pb=$(it_field beta pid)
t0=$SECONDS
check "init exits on SIGTERM" it_stop
check "init exit status 0" test "$INIT_RC" = 0
check "within the grace period" test $((SECONDS - t0)) -le 6
check "no agent left running" bash -c "! kill -0 $pa 2>/dev/null && ! kill -0 $pb 2>/dev/null"
check "the escaped grandchild of gamma is gone too (subreaper)" bash -c "! pgrep -u 64103 >/dev/null"
eb=$(grep -n 'beta: pid .* exited' "$T_DIR/init.log" | cut -d: -f1)
ea=$(grep -n 'alpha: pid .* exited' "$T_DIR/init.log" | tail -1 | cut -d: -f1)
check "beta stopped before alpha" test "${eb:-9999}" -lt "${ea:-0}"
check "admin.sock removed" test ! -e "$RUN/init/admin.sock"
t_done

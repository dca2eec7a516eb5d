#!/usr/bin/env bash
# init_faults.sh: a syscall outside the policy kills the agent (named in init's log, the syscall too in debug mode); crash loops back off with growing, capped delays; a permanent failure is not restarted and shows in `mtsctl agent ls`.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
cat >>"$T_DIR/mts.conf" <<EOF
[sys]
executable = $TA
user = 64121
args = -s sys.sock -x syscall -w 100
seccomp = $POLICY
restart = never

[sysdebug]
executable = $TA
user = 64122
args = -s sysdebug.sock -x syscall -w 100
seccomp = $POLICY
seccomp_debug = yes
restart = never

[inet]
executable = $TA
user = 64123
args = -s inet.sock -x inet -w 100
seccomp = $POLICY
restart = never

[loop]
executable = $TA
user = 64124
args = -s loop.sock -x exit:1
restart_delay = 40ms
restart_max_delay = 320ms

[perm]
executable = $TA
user = 64125
args = -s perm.sock -x exit:78 -w 100
EOF
it_start
ended() { [ -n "$(it_field "$1" last_exit)" ] && [ -z "$(it_field "$1" pid)" ]; }
check "sys agent died" wait_for 10 ended sys
check "sys: killed by SIGSYS" grep -q 'SIGSYS' <<<"$(it_field sys last_exit)"
check "init log names the agent" grep -q 'agent sys: pid [0-9]* killed by SIGSYS' "$T_DIR/init.log"
check "sysdebug died" wait_for 10 ended sysdebug
check "debug mode: init log names the syscall" grep -q 'agent sysdebug: pid [0-9]* killed by SIGSYS: its seccomp policy denied syscall ptrace' "$T_DIR/init.log"
check "debug mode: agent ls shows it" grep -q ptrace <<<"$(it_field sysdebug last_exit)"
check "inet died" wait_for 10 ended inet
check "socket(AF_INET) is denied by the argument filter" grep -q SIGSYS <<<"$(it_field inet last_exit)"
check "inet never got a socket" bash -c "! grep -q 'socket(AF_INET) returned' $T_DIR/init.log"

check "perm agent failed" wait_for 10 it_state_is perm failed
check "agent ls shows state failed and exit 78" bash -c "$CTL agent ls | awk '\$1==\"perm\" && \$2==\"failed\" && /exit 78/ {ok=1} END {exit !ok}'"
check "init logs the permanent failure" grep -q 'agent perm: permanent failure' "$T_DIR/init.log"
n=$(grep -c 'agent perm: started' "$T_DIR/init.log")
check "perm started once" test "$n" = 1

# Crash loop: 40, 80, 160, 320, 320 ms.
check "loop restarted at least 6 times" wait_for 10 bash -c "[ \$(grep -c 'agent loop: restart #' $T_DIR/init.log) -ge 6 ]"
delays=$(grep -o 'agent loop: restart #[0-9]* in [0-9]* ms' "$T_DIR/init.log" | awk '{print $NF=="ms" ? $(NF-1) : $NF}' | head -6 | tr '\n' ' ')
echo "crash-loop delays: $delays"
check "delays grow and cap" test "$delays" = "40 80 160 320 320 320 "
# And they are real: consecutive starts at least 3/4 of the delay apart
# (the "started" line is logged after fork, so a loaded machine can shift
# one line by a few ms; without a backoff the starts come ~1 ms apart).
starts=$(grep 'agent loop: started' "$T_DIR/init.log" | awk '{split($1,t,":"); print (t[1]*3600+t[2]*60+t[3])*1000}' | head -6 | tr '\n' ' ')
check "starts spaced by the delays" python3 -c '
import sys
s=[float(x) for x in sys.argv[1].split()]; d=[40,80,160,320,320]
sys.exit(0 if all(s[i+1]-s[i] >= d[i]*3/4 for i in range(5)) else 1)' "$starts"
$CTL agent stop loop >/dev/null
check "stopped loop stays down" wait_for 5 it_state_is loop down
$CTL agent start perm >/dev/null
check "start clears a permanent failure" wait_for 5 bash -c "[ \$(grep -c 'agent perm: started' $T_DIR/init.log) = 2 ]"
check "init stops" it_stop
t_done

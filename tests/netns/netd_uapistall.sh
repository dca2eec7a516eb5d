#!/usr/bin/env bash
# netd_uapistall.sh: mts-netd's loop never waits for wireguard-go — with wireguard-go stopped (SIGSTOP: its UAPI socket accepts into the backlog and never answers), status and attach still answer within a second (they took 2 s and more when netd read the UAPI synchronously), the stalled request is closed after its deadline with a clear log line, and once wireguard-go runs again netd goes on, never restarted.
. "$(dirname "$0")/lib.sh"
command -v wireguard-go >/dev/null || skip_all "needs wireguard-go"
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_NETD_CONF="seccomp_debug = yes"
ctl() { g_ctl "$@"; }
log=$MTS_CLUSTER_DIR/n1/log/netd.log
n_up 1 || { cat "$T_DIR/up.log"; fail "a node up in its namespace with netd"; t_done; }
pass "a node up in its namespace with netd"
wg_pid() { ip netns pids "$(n_ns 1)" | while read -r p; do [ "$(cat /proc/"$p"/comm 2>/dev/null)" = wireguard-go ] && echo "$p"; done | head -1; }
mts0_up() { n_in 1 ip -o link show mts0 | grep -q 'mtu 1420.*state UNKNOWN\|mtu 1420.*UP'; }
check "netd brings mts0 up" wait_for 10 mts0_up
wg=$(wg_pid)
check "wireguard-go runs ($wg)" test -n "$wg"
ms() { echo $(($(date +%s%N) / 1000000)); }
# TIME VAR CMD...: runs CMD, its wall time in ms in VAR
timed() { local v=$1 t0 rc; shift; t0=$(ms); "$@" >"$T_DIR/timed.out" 2>&1; rc=$?; printf -v "$v" %s $(($(ms) - t0)); return $rc; }
timed base ctl 1 overlay status
check "status answers while wireguard-go runs (${base} ms)" test "$base" -lt 2000

kill -STOP "$wg"
stalled_at=$(ms)
timed st1 ctl 1 overlay status
check "with wireguard-go stopped, status answers within 1 s (${st1} ms)" test "$st1" -lt 1000
# a status waiting for the counters, and an attach behind it: the
# attach is not held up by the stalled socket either
ctl 1 overlay status >/dev/null 2>&1 &
bg=$!
sleep 0.2
timed at ctl 1 -o json overlay attach stall.1
arc=$?
check "an attach meanwhile answers within 1 s (${at} ms, exit $arc)" sh -c "[ $arc = 0 ] && [ $at -lt 1000 ]"
wait $bg
timed st2 ctl 1 overlay status
check "and status again (${st2} ms)" test "$st2" -lt 1000
closed() { grep -q 'wireguard UAPI .*: no answer to get (counters) within 2[0-9]\{3\} ms: connection closed' "$log"; }
check "the stalled request is closed after 2 s, and logged" wait_for 5 closed
grep 'no answer to' "$log" | head -2 | sed 's/^/  /'
check "netd's loop had no slow turn" sh -c "! grep -q 'loop turn took' '$log'"

kill -CONT "$wg"
sleep 0.3
timed st3 ctl 1 overlay status
check "status after the stall (${st3} ms)" test "$st3" -lt 1000
check "netd was not restarted" [ "$(grep -c 'ready on' "$log")" = 1 ]
check "netd did not stop" sh -c "! grep -q 'stopping' '$log'"
check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n1/log/init.log"
t_done

#!/usr/bin/env bash
# netd_wgstart.sh: mts-netd waits for a new wireguard-go on its loop, not in a sleep before it serves — with a wireguard-go that takes 3 s to start (a wrapper), netd answers status at once, while wireguard-go is not there yet, and configures mts0 (up, MTU, the cluster CIDR's route) when it answers.
. "$(dirname "$0")/lib.sh"
command -v wireguard-go >/dev/null || skip_all "needs wireguard-go"
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"
printf '#!/bin/sh\nsleep 3\nexec %s "$@"\n' "$(command -v wireguard-go)" >"$T_DIR/slow-wg"
chmod 0755 "$T_DIR/slow-wg"
export MTS_CLUSTER_NETD=1 MTS_CLUSTER_NETD_CONF="wireguard_go = $T_DIR/slow-wg\nseccomp_debug = yes"
ctl() { g_ctl "$@"; }
n_up 1 || { cat "$T_DIR/up.log"; fail "a node up in its namespace with netd"; t_done; }
pass "a node up in its namespace with netd"
wg_running() { ip netns pids "$(n_ns 1)" | while read -r p; do [ "$(cat /proc/"$p"/comm 2>/dev/null)" = wireguard-go ] && echo "$p"; done | grep -q .; }
# up waited for netd.sock: the status answers while the wrapper still sleeps
ctl 1 overlay status >"$T_DIR/status" 2>&1
st=$?
wg_running && early=1 || early=0
check "netd answers status before wireguard-go runs (it does not wait in a sleep)" sh -c "[ $st = 0 ] && [ $early = 0 ]"
check "wireguard-go runs within 10 s" wait_for 10 wg_running
mts0_up() { n_in 1 ip -o link show mts0 | grep -q 'mtu 1420.*state UNKNOWN\|mtu 1420.*UP'; }
check "netd then brings mts0 up with its MTU" wait_for 10 mts0_up
route() { n_in 1 ip route show 10.210.0.0/16 | grep -q 'dev mts0'; }
check "and routes the cluster CIDR through it" wait_for 5 route
# (the line follows the route by a sysctl write: wait for it; 3 s or more)
logged() { grep -Eq 'wireguard-go started for mts0 \(([3-9][0-9]{3}|[1-9][0-9]{4,}) ms\)' "$MTS_CLUSTER_DIR/n1/log/netd.log"; }
check "netd logged how long wireguard-go took ($(grep -o 'wireguard-go started for mts0 ([0-9]* ms)' "$MTS_CLUSTER_DIR/n1/log/netd.log" | head -1))" wait_for 5 logged
check "netd was not restarted meanwhile" [ "$(grep -c 'ready on' "$MTS_CLUSTER_DIR/n1/log/netd.log")" = 1 ]
check "no agent was killed by its seccomp filter" sh -c "! grep -h SIGSYS '$MTS_CLUSTER_DIR'/n1/log/init.log"
t_done

#!/usr/bin/env bash
# netd_nftdelta.sh: an attach or detach on networks that already have a task here changes table inet mts by set elements only — the table is not replaced (its kernel handle stays; every attach replaced it before), its sets hold exactly the tasks' addresses, and isolation holds across such changes; a task on a new network rebuilds the table whole.
. "$(dirname "$0")/lib.sh"
command -v wireguard-go >/dev/null || skip_all "needs wireguard-go"
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"
command -v busybox >/dev/null || skip_all "needs busybox"
export MTS_CLUSTER_NETD=1
ctl() { g_ctl "$@"; }
log=$MTS_CLUSTER_DIR/n1/log/netd.log
n_up 1 || { cat "$T_DIR/up.log"; fail "a node up in its namespace with netd"; t_done; }
pass "a node up in its namespace with netd"
attach() { # TASK NET...: prints the address
	local t=$1 a=() n
	shift
	for n in "$@"; do a+=(--network "$n"); done
	ctl 1 -o json overlay attach "${a[@]}" "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"].split("/")[0])'
}
handle() { n_in 1 nft -a list table inet mts | sed -n 's/^table inet mts { # handle \([0-9]*\)$/\1/p'; }
# the addresses of the set of network NET, sorted
members() { n_in 1 nft -j list table inet mts | python3 -c '
import json,sys
for o in json.load(sys.stdin)["nftables"]:
    s = o.get("set")
    if s and s.get("comment") == sys.argv[1]:
        e = s.get("elem", [])
        print(" ".join(sorted(x if isinstance(x, str) else x["elem"]["val"] for x in e)))' "$1"; }
a1=$(attach t1 neta) && a2=$(attach t2 neta) && b1=$(attach t3 netb) || { fail "three tasks attached"; t_done; }
pass "three tasks attached ($a1 $a2 on neta, $b1 on netb)"
tab() { [ -n "$(handle)" ]; }
check "table inet mts is there" wait_for 10 tab
h0=$(handle)
a3=$(attach t4 neta)
check "a fourth task on neta: the table is not replaced (handle $h0, now $(handle))" [ "$(handle)" = "$h0" ]
check "neta's set holds the three neta tasks" [ "$(members neta)" = "$(printf '%s\n' "$a1" "$a2" "$a3" | sort | xargs)" ]
ctl 1 overlay detach t2 >/dev/null
check "t2 detached: the table is not replaced" [ "$(handle)" = "$h0" ]
check "neta's set holds t1 and t4 only" [ "$(members neta)" = "$(printf '%s\n' "$a1" "$a3" | sort | xargs)" ]
check "t1 reaches t4 (both on neta)" sh -c "nsenter --net='$(g_run 1)/netd/ns/t1' busybox ping -c 1 -W 2 $a3 >/dev/null"
check "t4 does not reach t3 (netb)" sh -c "! nsenter --net='$(g_run 1)/netd/ns/t4' busybox ping -c 1 -W 1 $b1 >/dev/null"
a2b=$(attach t2 neta)
check "t2 again (same address $a2b): the table is not replaced" sh -c "[ '$(handle)' = '$h0' ] && [ '$a2b' = '$a2' ]"
check "t2 reaches t1" sh -c "nsenter --net='$(g_run 1)/netd/ns/t2' busybox ping -c 1 -W 2 $a1 >/dev/null"
attach t5 netc >/dev/null
h1=$(handle)
check "a task on a new network: the table is rebuilt (handle $h1)" sh -c "[ -n '$h1' ] && [ '$h1' != '$h0' ]"
check "netc's set is there" [ -n "$(members netc)" ]
check "nftables refused nothing" sh -c "! grep -q 'nftables refused' '$log'"
t_done

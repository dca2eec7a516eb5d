#!/usr/bin/env bash
# gossip_relay.sh: the node-to-node relay — a statestore request run on another node through gossipd, idempotent retries by request id, unknown targets refused.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down; t_cleanup' EXIT

RELAY=$BUILD/tests/gossip_relay
if ! g_up 2; then
	fail "2-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "2-node cluster formed"
check "both alive" wait_for 5 g_all_alive 2 1 2
id2=$(g_id 2)
g_ctl 2 state put relay/local x >/dev/null
want=$(g_root 2)
got=$("$RELAY" "$(g_run 1)" "$id2" 1 root)
check "relayed root request answers with node 2's root" [ "$got" = "root $want" ]

first=$("$RELAY" "$(g_run 1)" "$id2" 77 put relay/once v1)
again=$("$RELAY" "$(g_run 1)" "$id2" 77 put relay/once v2)
check "relayed put ran on node 2 ($first)" [ -n "$first" ]
check "a retry with the same request id is answered from the first reply" [ "$first" = "$again" ]
check "the retried put did not write again" [ "$(g_ctl 2 state get --value relay/once)" = v1 ]
other=$("$RELAY" "$(g_run 1)" "$id2" 78 put relay/once v3)
check "a new request id runs again" [ "$other" != "$first" ]

if "$RELAY" "$(g_run 1)" 0123456789abcdef0123456789abcdef 79 root 2>"$T_DIR/err"; then
	fail "relay to an unknown node is refused"
else
	check "relay to an unknown node is refused" grep -q "no such member" "$T_DIR/err"
fi
g_final_check 1 2
t_done

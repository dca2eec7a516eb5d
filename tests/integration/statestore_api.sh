#!/usr/bin/env bash
# statestore_api.sh: mts-statestore's local API end to end — reads and writes, CAS, ownership, ACLs, change feed, pruning without resurrection, bad input.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
SS=$BUILD/tests/sstool
RUN=$T_DIR/run
SOCK=$RUN/statestore/statestore.sock
NODE=0123456789abcdef0123456789abcdef
OTHER=fedcba9876543210fedcba9876543210

cat >"$T_DIR/mts.conf" <<CONF
[node]
rundir = $RUN
statedir = $T_DIR/state
[statestore]
tombstone_retention = 2s
prune_interval = 500ms
acl_read = 0 4242
acl_write = 0
acl_merge = 0
CONF

start() {
	MTS_NODE_ID=$NODE "$BIN/mts-statestore" -c "$T_DIR/mts.conf" 2>>"$T_DIR/log" &
	SS_PID=$!
	T_PIDS+=("$SS_PID")
	wait_for 10 "$SS" "$SOCK" root >/dev/null
}

# -n prints the effective config, which parses again.
"$BIN/mts-statestore" -n -c "$T_DIR/mts.conf" >"$T_DIR/printed.conf"
check "config -n prints effective config" grep -q "tombstone_retention = 2s" "$T_DIR/printed.conf"
check "printed config parses again" "$BIN/mts-statestore" -n -c "$T_DIR/printed.conf"
printf '[statestore]\nbogus = 1\n' >"$T_DIR/bad.conf"
out=$("$BIN/mts-statestore" -n -c "$T_DIR/bad.conf" 2>&1)
check "unknown key reported with file and line" grep -q "bad.conf:2: unknown key 'bogus'" <<<"$out"

printf '[node]\nrundir = %s\nstatedir = %s\n[statestore]\nacl_read = 0 nosuchuser_mts\n' "$T_DIR/r2" "$T_DIR/s2" >"$T_DIR/acl.conf"
out=$("$BIN/mts-statestore" -c "$T_DIR/acl.conf" 2>&1); rc=$?
check "unknown ACL user refuses to start (usage exit)" [ "$rc" -eq 64 ]
check "unknown ACL user named with file and line" grep -q "acl.conf:5: \[statestore\] acl_read: unknown user 'nosuchuser_mts'" <<<"$out"

start
check "put then get" bash -c "'$SS' '$SOCK' put k1 hello && [ \"\$('$SS' '$SOCK' get k1)\" = hello ]"
check "record carries this node as origin" bash -c "'$SS' '$SOCK' getv k1 | grep -q origin=$NODE"

# Compare-and-set
hlc=$("$SS" "$SOCK" getv k1 | sed -E 's/.*hlc=([0-9]+).*/\1/')
check "CAS with stale expectation refused" bash -c "'$SS' '$SOCK' putif k1 x 1 $NODE | grep -q 'error 3'"
check "CAS create-if-absent refused on existing key" bash -c "'$SS' '$SOCK' putif k1 x 0 - | grep -q 'error 3'"
check "CAS with current expectation applies" bash -c "'$SS' '$SOCK' putif k1 v2 $hlc $NODE | grep -q ok && [ \"\$('$SS' '$SOCK' get k1)\" = v2 ]"
check "CAS create-if-absent on new key" bash -c "'$SS' '$SOCK' putif k2 new 0 - | grep -q ok"

# Node-owned keys
check "own node key writable" "$SS" "$SOCK" put "n/$NODE" info
check "other node's key refused" bash -c "! '$SS' '$SOCK' put 'n/$OTHER' info 2>&1 | grep -q 'belongs to another node'; '$SS' '$SOCK' put 'n/$OTHER' x 2>&1 | grep -q 'belongs to another node'"

# Change feed: only subscribed prefixes arrive, with the key as topic.
"$SS" "$SOCK" watch "t/" 2 >"$T_DIR/watch" &
W=$!
wait_for 5 grep -q watching "$T_DIR/watch"
sleep 0.3
"$SS" "$SOCK" put "d/$NODE" digest
"$SS" "$SOCK" put "t/$NODE/a" task-a
"$SS" "$SOCK" put "t/$NODE/b" task-b
wait $W
check "feed delivers subscribed changes" bash -c "grep -c '^t/' '$T_DIR/watch' | grep -qx 2"
check "feed filters other prefixes" bash -c "! grep -q '^d/' '$T_DIR/watch'"

# Merge: newer wins, older ignored, bad records refused with a reason.
check "merge of newer remote record applies" bash -c "'$SS' '$SOCK' merge m1 remote 281474976710655 $OTHER | grep -q 'applied 1'"
check "merge of older record ignored" bash -c "'$SS' '$SOCK' merge m1 older 5 $OTHER | grep -q 'ignored 1'"
check "merge is idempotent" bash -c "'$SS' '$SOCK' merge m1 remote 281474976710655 $OTHER | grep -q 'ignored 1'"
check "HLC advanced past the remote record" bash -c "'$SS' '$SOCK' put k3 x && [ \$('$SS' '$SOCK' getv k3 | sed -E 's/.*hlc=([0-9]+).*/\1/') -gt 281474976710655 ]"
THIRD=00000000000000000000000000000003
"$SS" "$SOCK" merge r1 one 7777 "$OTHER" >/dev/null
"$SS" "$SOCK" merge r2 two 7778 "$THIRD" >/dev/null
"$SS" "$SOCK" records r1 r2 nosuch >"$T_DIR/records"
check "records returns each record with its own origin" bash -c "grep -q '^r1 hlc=7777 origin=$OTHER' '$T_DIR/records' && grep -q '^r2 hlc=7778 origin=$THIRD' '$T_DIR/records'"
check "records omits missing keys" bash -c "[ \$(wc -l <'$T_DIR/records') = 2 ]"
check "bad merge record refused with a reason" bash -c "'$SS' '$SOCK' merge m2 v 0 $OTHER | grep -q 'hlc is zero'"

# Deletes, pruning and no resurrection
"$SS" "$SOCK" put gone soon
del_hlc=$("$SS" "$SOCK" getv gone | sed -E 's/.*hlc=([0-9]+).*/\1/')
"$SS" "$SOCK" del gone
check "deleted key reads as absent" bash -c "! '$SS' '$SOCK' get gone"
check "tombstone kept before retention" bash -c "'$SS' '$SOCK' getv gone | grep -q deleted"
check "tombstone pruned after retention" wait_for 8 bash -c "! '$SS' '$SOCK' getv gone >/dev/null"
check "pruned key not resurrected by an older record" bash -c "'$SS' '$SOCK' merge gone soon $del_hlc $NODE | grep -q 'ignored 1'"
check "deleting an absent key is NOT_FOUND" bash -c "'$SS' '$SOCK' del never | grep -q 'error 2'"

# Every page reachable from the root is fetchable and matches its hash.
check "tree walk matches root counts" "$SS" "$SOCK" pages

# Authorization by peer uid: make the socket reachable, then ask as others.
chmod 0755 "$T_DIR" "$RUN" "$RUN/statestore"
chmod 0666 "$SOCK"
out=$(setpriv --reuid=4243 --regid=4243 --clear-groups "$SS" "$SOCK" get k1 2>&1)
check "uid outside every ACL refused" grep -q "uid 4243 is not allowed to call get" <<<"$out"
check "read-only uid can read" bash -c "[ \"\$(setpriv --reuid=4242 --regid=4242 --clear-groups '$SS' '$SOCK' get k1)\" = v2 ]"
out=$(setpriv --reuid=4242 --regid=4242 --clear-groups "$SS" "$SOCK" put k1 x 2>&1)
check "read-only uid cannot write" grep -q "not allowed to call put" <<<"$out"

# Bad input: each malformed request answered with an error; still serving.
check "malformed requests get clear errors" "$SS" "$SOCK" probe
check "still serving after bad input" bash -c "[ \"\$('$SS' '$SOCK' get k1)\" = v2 ]"

# Restart keeps everything and the same root.
root1=$("$SS" "$SOCK" root)
kill "$SS_PID"; wait "$SS_PID" 2>/dev/null
start
check "restart rebuilds the same root" bash -c "[ \"\$('$SS' '$SOCK' root)\" = '$root1' ]"
t_done

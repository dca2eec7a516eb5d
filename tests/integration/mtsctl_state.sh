#!/usr/bin/env bash
# mtsctl_state.sh: mtsctl's framework and state commands against the test agent's in-memory statestore API.
. "$(dirname "$0")/../lib.sh"
t_testagent

out=$($CTL state put c/motd hello 2>&1)
check "put prints the record" grep -q '^key: *c/motd' <<<"$out"
check "get shows the value" bash -c "$CTL state get c/motd | grep -q '^value: *hello'"
check "get --value prints raw bytes" test "$($CTL state get --value c/motd)" = hello
printf 'a\001b' | $CTL state put bin - >/dev/null
check "binary value escaped" bash -c "$CTL state get bin | grep -qF 'a\\x01b'"
$CTL state get nope >/dev/null 2>"$T_DIR/err"
check "missing key exits 5" test $? -eq 5
check "missing key says not found" grep -q 'nope: not found' "$T_DIR/err"

for i in $(seq 1 25); do $CTL state put "n/k$i" "v$i" >/dev/null; done
check "ls PREFIX lists 25 keys" test "$($CTL state ls n/ | tail -n +2 | wc -l)" -eq 25
check "ls json is an array of 25" test "$($CTL -o json state ls n/ | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" -eq 25
$CTL state rm n/k1 >/dev/null
check "rm hides the key from ls" test "$($CTL state ls n/ | tail -n +2 | wc -l)" -eq 24
check "ls --tombstones shows it" test "$($CTL state ls --tombstones n/ | tail -n +2 | wc -l)" -eq 25

# rh must be BLAKE2b-256 of version|hlc|origin|flags|value, computed independently here.
line=$($CTL -o json state get c/motd)
want=$(python3 -c '
import json,sys,hashlib,struct
r=json.loads(sys.argv[1])
enc=bytes([1])+struct.pack(">Q",r["hlc"])+bytes.fromhex(r["origin"])+bytes([1 if r["tombstone"] else 0])+r["value"].encode()
print(hashlib.blake2b(enc,digest_size=32).hexdigest())' "$line")
got=$($CTL state ls --hashes c/ | awk '$1=="c/motd"{print $2}')
check "ls --hashes prints the record hash" test "$got" = "$want"
check "root shows counts" bash -c "$CTL state root | grep -q '^records: *27'"

$CTL -r "$T_DIR/nowhere" state root 2>"$T_DIR/err"
check "missing socket exits 3" test $? -eq 3
check "missing socket names the run directory" grep -q 'nowhere' "$T_DIR/err"
$CTL state 2>/dev/null; check "group without command is a usage error" test $? -eq 2
$CTL bogus 2>/dev/null; check "unknown command exits 2" test $? -eq 2
$CTL state put onlykey 2>/dev/null; check "missing argument exits 2" test $? -eq 2
check "every command has a manual" bash -c "for c in version 'agent ls' 'agent start' 'agent stop' 'agent restart' 'state get' 'state put' 'state rm' 'state ls' 'state root' 'config check' 'config print'; do $CTL \$c --help | grep -q '^EXIT STATUS' || exit 1; done"
$CTL -o yaml state root 2>/dev/null; check "bad -o exits 2" test $? -eq 2

# Not root: the test agent refuses, and mtsctl says so.
chmod 755 "$T_DIR" "$RUN" "$RUN/statestore"; chmod 666 "$RUN/statestore/statestore.sock"
setpriv --reuid 64999 --regid 64999 --clear-groups $CTL state put x y 2>"$T_DIR/err"
check "refused caller exits 4" test $? -eq 4
check "refusal says permission denied" grep -q 'permission denied' "$T_DIR/err"
t_done

#!/usr/bin/env bash
# statestore_full.sh: a statestore started on a full disk (under init, its seccomp filter on) comes up, serves reads, refuses writes naming ENOSPC, takes writes again once space returns, and keeps them across SIGKILL.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
UID_SS=64188
# The node's state (the statestore's RocksDB, the node key) on an 8 MiB
# filesystem of its own.
mkdir -p "$STATE"
mount -t tmpfs -o size=8m,mode=0755 mts-full "$STATE" || skip_all "cannot mount a tmpfs"
trap 'umount -l "$STATE" 2>/dev/null; [ "${KEEP:-0}" = 1 ] || t_cleanup' EXIT
cat >>"$T_DIR/mts.conf" <<EOC

[statestore]
executable = $BIN/mts-statestore
user = $UID_SS
seccomp = $TOP/config/seccomp/statestore.policy
restart_delay = 50ms
acl_read = 0
acl_write = 0
EOC
it_start
check "statestore up" wait_for 20 it_state_is statestore up
check "a first write" "$CTL" state put full/a one
"$CTL" agent stop statestore >/dev/null
check "statestore stopped" wait_for 10 it_state_is statestore down
dd if=/dev/zero of="$STATE/fill" bs=64k 2>/dev/null
check "the disk is full" test "$(df --output=avail -B1 "$STATE" | tail -1)" -lt 65536

"$CTL" agent start statestore >/dev/null
check "statestore comes up on the full disk" wait_for 20 it_state_is statestore up
pid=$(it_field statestore pid)
check "reads are served" bash -c "[ \"\$('$CTL' state get --value full/a)\" = one ]"
"$CTL" state put full/b two >"$T_DIR/out" 2>"$T_DIR/err"
check "a write is refused" test $? -ne 0
check "the refusal names ENOSPC" grep -q 'no space left on device (ENOSPC)' "$T_DIR/err"
check "reads still served after the refusal" bash -c "[ \"\$('$CTL' state get --value full/a)\" = one ]"
sleep 0.5
check "no abort, no restart" test "$(it_field statestore pid)" = "$pid"
check "never killed by a signal" bash -c "! grep -Eq 'Assertion|SIGABRT|signal 6|SIGSYS' '$T_DIR/init.log'"

rm -f "$STATE/fill"
check "writes are taken once space returns" "$CTL" state put full/b two
check "and more" "$CTL" state put full/c three
check "the reopen stayed inside the seccomp filter" test "$(it_field statestore pid)" = "$pid"
kill -9 "$pid"
check "back after SIGKILL" wait_for 10 bash -c "p=\$('$CTL' agent ls | awk '\$1==\"statestore\" && \$2==\"up\" {print \$3}'); [ -n \"\$p\" ] && [ \"\$p\" != $pid ]"
for kv in a:one b:two c:three; do
	check "acknowledged write full/${kv%%:*} survived" bash -c "[ \"\$('$CTL' state get --value full/${kv%%:*})\" = ${kv#*:} ]"
done
check "init stops" it_stop
t_done

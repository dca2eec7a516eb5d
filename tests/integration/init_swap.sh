#!/usr/bin/env bash
# init_swap.sh: the real statestore under mts-init (its strict seccomp policy, readiness, SIGKILL recovery, data intact across SIGTERM), then swapped for another build under another name via the config.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
SS=$BIN/mts-statestore
[ -x "$SS" ] || skip_all "no mts-statestore built"
t_tmpdir
it_conf
cat >>"$T_DIR/mts.conf" <<EOF
[statestore]
executable = $SS
user = 64160
seccomp = $TOP/config/seccomp/statestore.policy
restart_delay = 50ms
EOF
"$CTL" config check "$T_DIR/mts.conf" >/dev/null
check "config with the shipped statestore policy is valid" test $? -eq 0
it_start
check "statestore up" wait_for 15 it_state_is statestore up
p=$(it_field statestore pid)
check "statestore uid" test "$(it_status "$p" Uid)" = "64160	64160	64160	64160"
check "statestore NoNewPrivs 1" test "$(it_status "$p" NoNewPrivs)" = 1
check "statestore Seccomp 2" test "$(it_status "$p" Seccomp)" = 2
check "statestore no capabilities" test "$(it_status "$p" CapEff)/$(it_status "$p" CapBnd)" = 0000000000000000/0000000000000000
node=$(sed -n 's/.*node test-node (id \([0-9a-f]*\)).*/\1/p' "$T_DIR/init.log")
check "statestore got the node id from init" grep -q "statestore.*node $node serving" "$T_DIR/init.log"
check "the node key is root's, 0600" test "$(stat -c %u:%a "$STATE/node.key")" = 0:600

for i in $(seq 1 40); do $CTL state put "c/key$i" "value $i" >/dev/null || break; done
check "40 writes through mtsctl" test "$i" = 40
check "get through mtsctl" test "$($CTL state get --value c/key7)" = "value 7"
$CTL state rm c/key1 >/dev/null
root1=$($CTL state root)
hashes1=$($CTL state ls --hashes c/)
check "ls --hashes lists 40 keys (tombstone included)" test "$(tail -n +2 <<<"$hashes1" | wc -l)" = 40

serving() { [ "$(it_field statestore pid)" != "$p" ] && [ "$(it_field statestore state)" = up ] && $CTL -t 300 state get c/key2 >/dev/null 2>&1; }
t0=$(date +%s%N)
kill -9 "$p"
wait_for 5 serving
ms=$((($(date +%s%N) - t0) / 1000000))
echo "statestore back after SIGKILL in ${ms} ms"
limit=1000
[[ $BUILD == *san* ]] && limit=3000
check "SIGKILLed statestore back and serving within $limit ms" test "$ms" -lt $limit
check "acknowledged writes survived the SIGKILL" test "$($CTL state root)" = "$root1"

# SIGTERM: everything stops, the data is intact.
p=$(it_field statestore pid)
check "init stops on SIGTERM" it_stop
check "statestore gone" bash -c "! kill -0 $p 2>/dev/null"

# Swap: the same section, another executable (a renamed copy).
mkdir -p "$T_DIR/alt"
cp "$SS" "$T_DIR/alt/mts-statestore-alt"
chmod 755 "$T_DIR/alt" "$T_DIR/alt/mts-statestore-alt"
sed -i "s|^executable = $SS\$|executable = $T_DIR/alt/mts-statestore-alt|" "$T_DIR/mts.conf"
it_start
check "swapped statestore up" wait_for 15 it_state_is statestore up
p=$(it_field statestore pid)
check "init runs the other executable" test "$(readlink "/proc/$p/exe")" = "$T_DIR/alt/mts-statestore-alt"
check "agent ls shows it" bash -c "$CTL -o json agent ls | grep -q mts-statestore-alt"
check "data intact after SIGTERM and swap (same root)" test "$($CTL state root)" = "$root1"
check "same keys and record hashes" test "$($CTL state ls --hashes c/)" = "$hashes1"
$CTL state put c/after-swap yes >/dev/null
check "writes work through the swapped agent" test "$($CTL state get --value c/after-swap)" = yes
check "swapped agent sandboxed too" test "$(it_status "$p" Seccomp)" = 2
check "init stops" it_stop
t_done

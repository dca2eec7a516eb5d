#!/usr/bin/env bash
# statestore_init.sh: the real mts-statestore under mts-init — own uid, seccomp filter on, data kept across SIGKILL and init restarts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
UID_SS=64180
cat >>"$T_DIR/mts.conf" <<EOC

[statestore]
executable = $BIN/mts-statestore
user = $UID_SS
seccomp = $TOP/config/seccomp/statestore.policy
acl_read = 0
acl_write = 0
EOC
it_start
check "statestore comes up under init" wait_for 20 it_state_is statestore up
pid=$(it_field statestore pid)
check "runs as its own uid" grep -Eq "^Uid:[[:space:]]+$UID_SS[[:space:]]+$UID_SS" "/proc/$pid/status"
check "seccomp filter installed" grep -q "^Seccomp:[[:space:]]*2" "/proc/$pid/status"
check "no_new_privs set" grep -q "^NoNewPrivs:[[:space:]]*1" "/proc/$pid/status"
check "put through mtsctl" "$CTL" state put cfg/a one
check "get through mtsctl" bash -c "'$CTL' state get cfg/a | grep -q one"
kill -9 "$pid"
t0=$(date +%s%N)
wait_for 5 bash -c "[ \"\$('$CTL' state get cfg/a 2>/dev/null)\" != '' ]"
ms=$((($(date +%s%N) - t0) / 1000000))
echo "statestore serving again $ms ms after SIGKILL"
check "back and serving within 1 s of SIGKILL" [ "$ms" -lt 1000 ]
check "data intact after SIGKILL" bash -c "'$CTL' state get cfg/a | grep -q one"
check "not killed by its seccomp filter" bash -c "! grep -q 'SIGSYS\\|signal 31' '$T_DIR/init.log'"
it_stop
check "init stopped" [ -n "${INIT_RC:-}" ]
check "no statestore left after init stopped" bash -c "! pgrep -u $UID_SS -f mts-statestore"
it_start
check "restarts under init" wait_for 20 it_state_is statestore up
check "data intact after init restart" bash -c "'$CTL' state get cfg/a | grep -q one"
it_stop
t_done

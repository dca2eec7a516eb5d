#!/usr/bin/env bash
# init_reload_acl.sh: `mtsctl config reload` restarts exactly the agents whose effective section changed, agent-specific keys included — a uid removed from [statestore] acl_read is refused at once, and a gossipd key restarts gossipd only.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
UID_SS=64186
UID_GD=64187
READER=64188
port=$(("$("$TOP/scripts/freeport" 1 "$T_DIR")" + 1)) || { fail "a free port"; t_done; }
cat >>"$T_DIR/mts.conf" <<EOC

[statestore]
executable = $BIN/mts-statestore
user = $UID_SS
seccomp = $TOP/config/seccomp/statestore.policy
acl_read = 0, $UID_GD, $READER
acl_write = 0, $UID_GD
acl_merge = 0, $UID_GD

[gossipd]
executable = $BIN/mts-gossipd
user = $UID_GD
seccomp = $TOP/config/seccomp/gossipd.policy
node_key = yes
after = statestore
listen = 127.0.0.1:$port
probe_interval = 1s
EOC
c=$T_DIR/mts.conf
# as_reader CMD...: runs CMD as the reader uid, in the admin group (which
# reaches the run directory) and nothing else.
as_reader() { setpriv --reuid "$READER" --regid "$ADMIN_GID" --clear-groups "$@"; }
# restarted: the names `config reload` printed after "restarted:".
reload() { "$CTL" -o json config reload >"$T_DIR/reload.json" 2>"$T_DIR/reload.err"; }
restarted() { python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["restarted"]))' "$T_DIR/reload.json"; }

it_start
check "statestore and gossipd come up" wait_for 20 bash -c "[ \"\$($CTL agent ls | awk 'NR>1 && \$2==\"up\"' | wc -l)\" -eq 2 ]"
check "put as root" "$CTL" state put acl/k v1
check "the reader may read" bash -c "setpriv --reuid $READER --regid $ADMIN_GID --clear-groups '$CTL' state get acl/k | grep -qx 'value: *v1'"
ss=$(it_field statestore pid)
gd=$(it_field gossipd pid)

# Remove the reader from acl_read: only the statestore's section changed.
sed -i "s/^acl_read = 0, $UID_GD, $READER\$/acl_read = 0, $UID_GD/" "$c"
check "config reload succeeds" reload
check "reload: only statestore restarted" test "$(restarted)" = statestore
check "statestore is up again with a new pid" wait_for 20 bash -c "p=\$($CTL agent ls | awk '\$1==\"statestore\" && \$2==\"up\"{print \$3}'); [ -n \"\$p\" ] && [ \"\$p\" != $ss ]"
check "gossipd untouched" test "$(it_field gossipd pid)" = "$gd"
as_reader "$CTL" state get acl/k >"$T_DIR/out" 2>"$T_DIR/err"
rc=$?
check "the removed uid is refused state get" bash -c "[ $rc -ne 0 ] && grep -q 'uid $READER is not allowed to call get' '$T_DIR/err' && [ ! -s '$T_DIR/out' ]"
check "root still reads" bash -c "'$CTL' state get acl/k | grep -qx 'value: *v1'"

# A gossipd key: gossipd restarts, the statestore does not.
ss=$(it_field statestore pid)
sed -i 's/^probe_interval = 1s$/probe_interval = 2s/' "$c"
check "second reload succeeds" reload
check "reload: only gossipd restarted" test "$(restarted)" = gossipd
check "gossipd is up again with a new pid" wait_for 20 bash -c "p=\$($CTL agent ls | awk '\$1==\"gossipd\" && \$2==\"up\"{print \$3}'); [ -n \"\$p\" ] && [ \"\$p\" != $gd ]"
check "statestore untouched by a gossipd change" test "$(it_field statestore pid)" = "$ss"

# Nothing changed: nothing restarts (a comment is not a setting).
echo "# a comment" >>"$c"
check "third reload succeeds" reload
check "reload of an unchanged file restarts nothing" test -z "$(restarted)"
it_stop
"$TOP/scripts/freeport" --release "$T_DIR" 2>/dev/null
t_done

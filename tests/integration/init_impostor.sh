#!/usr/bin/env bash
# init_impostor.sh: an admin-group user cannot stand in for an agent (its socket directory is the agent's alone, the run directory root's), and an impostor socket planted anyway is refused by gossipd's and mtsctl's clients before they send a byte.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
UID_SS=64185 UID_GD=64186 ADMIN=64187
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >>"$T_DIR/mts.conf" <<EOC

[statestore]
executable = $BIN/mts-statestore
user = $UID_SS
seccomp = $TOP/config/seccomp/statestore.policy
acl_read = 0, $UID_GD
acl_write = 0, $UID_GD
acl_merge = 0, $UID_GD

[gossipd]
executable = $BIN/mts-gossipd
user = $UID_GD
seccomp = $TOP/config/seccomp/gossipd.policy
node_key = yes
after = statestore
listen = 127.0.0.1:$PORT
EOC
# An SP server stand-in that answers nothing and writes down every
# connection and every byte it is sent.
cat >"$T_DIR/impostor.py" <<'EOF'
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o666)
s.listen(16)
while True:
    c, _ = s.accept()
    with open(log, "ab") as f:
        f.write(b"connection\n")
    c.settimeout(2)
    try:
        while True:
            b = c.recv(4096)
            if not b:
                break
            with open(log, "ab") as f:
                f.write(b"bytes " + b.hex().encode() + b"\n")
    except OSError:
        pass
    c.close()
EOF
it_start
check "statestore and gossipd up" wait_for 20 it_all_up
as_admin() { setpriv --reuid "$ADMIN" --regid "$ADMIN_GID" --clear-groups "$@"; }
# (the system's python: root's may live where other users cannot run it)
PY=/usr/bin/python3
bind_as_admin() { as_admin $PY -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1" 2>/dev/null; }
fails() { ! "$@" 2>/dev/null; }

# The attack of issue 10: stop the statestore, bind its socket, start it.
check "an admin may stop the statestore" as_admin "$CTL" agent stop statestore
check "statestore down" wait_for 10 it_state_is statestore down
check "run directory: root's, the admin group may only enter" test "$(stat -c %a:%u:%g "$RUN")" = "750:0:$ADMIN_GID"
check "statestore's directory: its own" test "$(stat -c %a:%u:%g "$RUN/statestore")" = "2750:$UID_SS:$ADMIN_GID"
mkdir "$T_DIR/imp" && chown "$ADMIN" "$T_DIR/imp"
check "admin can bind a socket in a directory of its own" bind_as_admin "$T_DIR/imp/try.sock"
rm -f "$T_DIR/imp/try.sock"
check "admin cannot bind statestore.sock in its directory" fails bind_as_admin "$RUN/statestore/statestore.sock"
check "admin cannot bind statestore.sock in the run directory" fails bind_as_admin "$RUN/statestore.sock"
check "admin cannot swap the statestore's directory" fails as_admin mv "$RUN/statestore" "$RUN/old"
check "admin cannot make a directory in the run directory" fails as_admin mkdir "$RUN/x"
check "nothing of the admin's in the statestore's directory" test -z "$(find "$RUN" -user "$ADMIN")"
check "an admin may start the statestore" as_admin "$CTL" agent start statestore
check "the real statestore comes up" wait_for 10 it_state_is statestore up
check "and serves" "$CTL" state put imp/k v
check "no stale-socket crash loop" bash -c "! grep -q 'cannot remove stale socket' '$T_DIR/init.log'"
check "statestore was started twice, no more" test "$(grep -c 'agent statestore: started' "$T_DIR/init.log")" = 2

# An impostor planted by root: served by the admin user, made elsewhere and
# moved to where clients look.
"$CTL" agent stop statestore >/dev/null
check "statestore down again" wait_for 10 it_state_is statestore down
: >"$T_DIR/imp.log" && chmod 666 "$T_DIR/imp.log"
setpriv --reuid "$ADMIN" --regid "$ADMIN_GID" --clear-groups $PY "$T_DIR/impostor.py" "$T_DIR/imp/s.sock" "$T_DIR/imp.log" &
T_PIDS+=($!)
wait_for 5 test -S "$T_DIR/imp/s.sock"
mv "$T_DIR/imp/s.sock" "$RUN/statestore/statestore.sock"
want="statestore.sock is served by uid $ADMIN, expected $UID_SS: refusing to talk to an impostor"
"$CTL" state get imp/k >"$T_DIR/out" 2>"$T_DIR/err"
check "mtsctl fails against the impostor" test $? -ne 0
check "mtsctl says it is an impostor" grep -qF "$want" "$T_DIR/err"
# cluster init makes gossipd write its cluster records to the statestore
"$CTL" cluster init >/dev/null 2>&1
check "gossipd refuses the impostor" wait_for 5 grep -qF "$want" "$T_DIR/init.log"
# (the impostor takes its connections one by one: wait for the second)
check "gossipd's and mtsctl's clients did connect" wait_for 5 bash -c "[ \$(grep -c '^connection' '$T_DIR/imp.log') -ge 2 ]"
check "the impostor was sent no byte" bash -c "! grep -q '^bytes' '$T_DIR/imp.log'"
rm -f "$RUN/statestore/statestore.sock"
"$CTL" agent start statestore >/dev/null
check "the real statestore serves again" wait_for 10 bash -c "'$CTL' state get --value imp/k 2>/dev/null | grep -q v"
check "init stops" it_stop
t_done

#!/usr/bin/env bash
# init_admin.sh: admin.sock refuses callers outside the admin group (by file mode and by peer credentials) and mtsctl says so; members and root are served; agents' users are refused.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
cat >>"$T_DIR/mts.conf" <<EOF
[alpha]
executable = $TA
user = 64131
EOF
it_start
check "agent up" wait_for 10 it_all_up
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups "$@"; }
# A member by primary group (numeric test users have no /etc/group entry
# for init to find supplementary memberships in).
as_member() { local u=$1; shift; setpriv --reuid "$u" --regid "$ADMIN_GID" --clear-groups "$@"; }

as 64199 "$CTL" agent ls >"$T_DIR/out" 2>"$T_DIR/err"
check "outsider: exit 4" test $? -eq 4
check "outsider: told permission denied" grep -q 'permission denied' "$T_DIR/err"
check "outsider: message names the admin group" grep -q 'admin group' "$T_DIR/err"
check "outsider: nothing on stdout" test ! -s "$T_DIR/out"

as_member 64198 "$CTL" agent ls >"$T_DIR/out" 2>"$T_DIR/err"
check "admin group member is served" test $? -eq 0
check "member sees the agent" grep -q '^alpha ' "$T_DIR/out"

# With the file modes opened up, init itself must refuse by peer uid.
chmod 0755 "$RUN" "$RUN/init"
chmod 0666 "$RUN/init/admin.sock"
as 64199 "$CTL" agent stop alpha >"$T_DIR/out" 2>"$T_DIR/err"
check "outsider past the file mode: exit 4" test $? -eq 4
check "refused by init: permission denied" grep -q 'permission denied: uid 64199 is not allowed' "$T_DIR/err"
check "init logged the denial" grep -q 'admin: denied agent-ctl to uid 64199' "$T_DIR/init.log"
as 64131 "$CTL" agent stop alpha 2>"$T_DIR/err"
check "an agent's user is refused even in the group" test $? -eq 4
check "agent still up after refused stops" it_state_is alpha up
check "init stops" it_stop
t_done

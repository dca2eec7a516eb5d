#!/usr/bin/env bash
# init_config.sh: bad configurations are reported with file and line and mts-init starts nothing; SIGHUP reloads (changed agents restarted, new ones started, removed ones stopped, a bad file refused).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
cp "$T_DIR/mts.conf" "$T_DIR/base.conf"
good="[good]
executable = $TA
user = 64141
"
printf 'read\nwrite\n\nno_such_call\n' >"$T_DIR/bad.policy"

# bad_case NAME EXPECTED-MESSAGE-REGEX SECTION-TEXT
bad_case() {
	local name=$1 want=$2
	{ cat "$T_DIR/base.conf"; printf '%s\n' "$good" "$3"; } >"$T_DIR/mts.conf"
	"$BIN/mts-init" -c "$T_DIR/mts.conf" >"$T_DIR/init.log" 2>&1 &
	local pid=$!
	wait_for 10 bash -c "! kill -0 $pid"
	wait $pid
	local rc=$?
	check "$name: init refuses to start (exit 64)" test $rc -eq 64
	check "$name: reported as FILE:LINE" grep -qE "^mts-init: $want" "$T_DIR/init.log"
	check "$name: nothing started" bash -c "! grep -q 'started pid' $T_DIR/init.log && [ ! -e $RUN/init/admin.sock ]"
	"$CTL" config check "$T_DIR/mts.conf" >/dev/null 2>"$T_DIR/check.err"
	check "$name: mtsctl config check exits 1 with the same message" bash -c "[ $? -eq 1 ] && grep -qE \"^$want\" $T_DIR/check.err"
}
c=$T_DIR/mts.conf
bad_case "unknown key" "$c:15: unknown key 'colour' in section \[bad\]" "[bad]
executable = $TA
user = 64142
colour = blue"
bad_case "missing executable" "$c:12: \[bad\] no executable" "[bad]
user = 64142"
bad_case "executable not found" "$c:13: \[bad\] executable: /nonexistent/agent: No such file" "[bad]
executable = /nonexistent/agent
user = 64142"
bad_case "unknown syscall" "$c:15: \[bad\] seccomp: $T_DIR/bad.policy:4: unknown syscall 'no_such_call'" "[bad]
executable = $TA
user = 64142
seccomp = bad.policy"
bad_case "unknown user" "$c:15: \[bad\] user: no such user 'no-such-user-mts'" "[bad]
executable = $TA

user = no-such-user-mts"
bad_case "unknown capability" "$c:15: \[bad\] capabilities: unknown capability 'cap_flying'" "[bad]
executable = $TA
user = 64142
capabilities = cap_flying"
nr_open=$(cat /proc/sys/fs/nr_open)
bad_case "limit_nofile above fs.nr_open" "$c:15: \[bad\] limit_nofile: $((nr_open + 1)) is out of range \(16 to $nr_open, this kernel's fs.nr_open\)" "[bad]
executable = $TA
user = 64142
limit_nofile = $((nr_open + 1))"
bad_case "limit_nofile of 2^63" "$c:15: \[bad\] limit_nofile = '9223372036854775808': value out of range" "[bad]
executable = $TA
user = 64142
limit_nofile = 9223372036854775808"
bad_case "dependency cycle" "$c:[0-9]+: \[(bad|ugly)\] after: dependency cycle" "[bad]
executable = $TA
user = 64142
after = ugly
[ugly]
executable = $TA
user = 64143
after = bad"

# A good config, then reloads.
{ cat "$T_DIR/base.conf"; printf '%s\n' "$good"; printf '[other]\nexecutable = %s\nuser = 64144\nargs = -s other.sock\n' "$TA"; } >"$c"
"$CTL" config check "$c" >"$T_DIR/out"
check "config check accepts the good file" grep -q ": ok, 2 agents" "$T_DIR/out"
it_start
check "agents up" wait_for 10 it_all_up
pg=$(it_field good pid)
po=$(it_field other pid)
sed -i 's/^args = -s other.sock$/args = -s other2.sock/' "$c"
printf '[third]\nexecutable = %s\nuser = 64145\nargs = -s third.sock\n' "$TA" >>"$c"
kill -HUP "$INIT_PID"
check "reload: added agent starts" wait_for 10 it_state_is third up
check "reload: changed agent restarted" wait_for 10 bash -c "p=\$($CTL agent ls | awk '\$1==\"other\"{print \$3}'); [ -n \"\$p\" ] && [ \"\$p\" != $po ] && [ -S $RUN/other/other2.sock ]"
check "reload: unchanged agent untouched" test "$(it_field good pid)" = "$pg"
check "reload logged" grep -q 'reloaded .*: 1 restarted, 1 added, 0 removed' "$T_DIR/init.log"
cp "$c" "$T_DIR/keep.conf"
echo "nonsense = 1" >>"$c"
kill -HUP "$INIT_PID"
check "bad reload refused with file and line" wait_for 5 grep -q "reload refused, old config kept: $c:[0-9]*: unknown key 'nonsense'" "$T_DIR/init.log"
check "bad reload: agents untouched" test "$(it_field good pid)" = "$pg"
"$CTL" config reload >"$T_DIR/out" 2>"$T_DIR/err"
check "mtsctl config reload of a bad file exits 1" test $? -eq 1
check "and prints file and line" grep -q "$c:[0-9]*: unknown key 'nonsense'" "$T_DIR/err"
cp "$T_DIR/keep.conf" "$c"
sed -i 's/^user = 64141$/user = 64141\nlog = good.log/' "$c"
"$CTL" -o json config reload >"$T_DIR/out"
check "mtsctl config reload restarts the changed agent" grep -A2 '"restarted"' "$T_DIR/out" | grep -q '"good"'
check "its stderr now goes to its own log file" wait_for 10 grep -q 'good\[[0-9]*\]: ready on' "$T_DIR/good.log"
cp "$c" "$T_DIR/keep.conf"
# drop the [third] section entirely
python3 - "$T_DIR/keep.conf" "$c" <<'EOF'
import sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(text[:text.index("[third]")])
EOF
kill -HUP "$INIT_PID"
check "reload: removed agent stopped and gone" wait_for 10 bash -c "! $CTL agent ls | grep -q '^third '"
check "init stops" it_stop
t_done

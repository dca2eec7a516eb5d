#!/usr/bin/env bash
# mtsctl_usage.sh: mtsctl as a newcomer types it — no arguments, --help, a group alone, a command without its operands, "--" in the wrong place, odd but valid input (unicode, huge numbers) — exits with a usage status and a message that says what is missing, never crashes; every command of the table has a manual.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
CTL=$BIN/mtsctl
export MTS_RUNDIR=$T_DIR/no-node # nothing listens here
cd "$T_DIR" || exit 1

# run ARGS...: mtsctl's exit status in $rc, stdout in $out, stderr in $err
run() {
	"$CTL" "$@" >"$T_DIR/out" 2>"$T_DIR/err" </dev/null
	rc=$?
	out=$(cat "$T_DIR/out")
	err=$(cat "$T_DIR/err")
}
# expect NAME RC PATTERN(stderr) ARGS...
expect() {
	local name=$1 want=$2 pat=$3
	shift 3
	run "$@"
	if [ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$err"; then
		pass "$name"
	else
		fail "$name (exit $rc, stderr: $(head -c 300 <<<"$err"))"
	fi
}

expect "mtsctl alone: the command list on stderr, exit 2" 2 '^COMMANDS$'
run --help
check "mtsctl --help: the command list on stdout, exit 0" eval '[ $rc = 0 ] && grep -q "^COMMANDS$" <<<"$out"'
expect "a group alone lists its commands" 2 '^    ls +list cluster members' node
expect "unknown command named" 2 "unknown command 'café'" café
expect "unknown subcommand named" 2 "unknown command 'node café'" node café
expect "state get without KEY: usage naming the manual" 2 'see mtsctl state get --help' state get
expect "task run without IMAGE: usage" 2 '^usage: .* task run ' task run
expect "task run -- CMD: the image is missing (not \"no image echo\")" 2 \
	'task run: IMAGE is missing' task run -- echo hi
expect "exec -- CMD: the task is missing" 2 'exec: TASK is missing' exec -- sh -c true
expect "exec TASK without a command" 2 'exec: no COMMAND to run in web' exec web
expect "exec TASK -- without a command" 2 'exec: no COMMAND to run in web' exec web --
expect "-t beyond an int refused (it wrapped around)" 2 'from 1 to 2147483647' -t 99999999999 version
expect "-t 2^32 refused" 2 'from 1 to 2147483647' -t 4294967296 version
expect "-o yaml refused" 2 'expected table or json' -o yaml node ls
expect "config check of a missing file: exit 5" 5 '^mtsctl: .*/nope.conf: no such file' config check "$T_DIR/nope.conf"
expect "config print of a missing file: exit 5" 5 '^mtsctl: .*/nope.conf: no such file' config print "$T_DIR/nope.conf"
expect "no node: exit 3 and where it looked" 3 'is mts-init running with run directory' node ls
expect "logs --tail -1 refused" 2 'expected a number of lines' logs --tail -1 web

# Every command of the table: a manual, and odd operands give a verdict
# (usage, not found, unreachable), not a crash.
mapfile -t COMMANDS < <("$CTL" --help | awk '/^COMMANDS/ {on = 1; next}
	on && /^$/ {exit} on {print substr($0, 5, 24)}' | sed 's/ *$//')
bad=
for c in "${COMMANDS[@]}"; do
	read -ra words <<<"$c"
	run "${words[@]}" --help
	[ "$rc" = 0 ] && grep -q "^NAME" <<<"$out" || bad="$bad [$c --help: $rc]"
	for args in "" "é" "-- é" "$(printf 'x%.0s' $(seq 1 5000))" "-z"; do
		# shellcheck disable=SC2086
		run "${words[@]}" $args
		case $rc in
		1 | 2 | 3 | 4 | 5) ;;
		*) bad="$bad [$c $args: exit $rc]" ;;
		esac
		grep -qE 'runtime error|Sanitizer|Segmentation' <<<"$err" && bad="$bad [$c $args: $err]"
		[ -n "$err" ] || bad="$bad [$c $args: no message]"
	done
done
check "every command: a manual, and a message and a verdict for odd operands${bad:+ (bad:${bad:0:600})}" test -z "$bad"
t_done

# tests/lib.sh: helpers sourced by integration and netns test scripts (verdict lines, waits, temp dirs).
#
# A test script prints "PASS: name" or "FAIL: name" per check, or
# "SKIP: name (why)" for a check it cannot run here (tests/run counts all
# three; a skip is not a pass), and exits non-zero if any check failed.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
BIN=$BUILD/bin
T_FAILED=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; T_FAILED=1; }
skip() { echo "SKIP: $*"; }

# skip_all WHY: the whole script cannot run here: one SKIP line, exit 0.
skip_all() {
	skip "$(basename "$0" .sh) ($*)"
	exit 0
}

# check NAME CMD...: PASS if the command succeeds, FAIL otherwise.
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# wait_for SECONDS CMD...: polls CMD every 50 ms until it succeeds; 1 on timeout.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
}

# A fresh scratch directory removed at exit (kept when KEEP=1, also by a
# test's own trap that calls t_cleanup).
t_tmpdir() {
	T_DIR=$(mktemp -d /tmp/mts-test.XXXXXX)
	[ "${KEEP:-0}" = 1 ] || trap 't_cleanup' EXIT
}

T_PIDS=()
t_cleanup() {
	local p
	for p in "${T_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then
		[ -n "${T_DIR:-}" ] && echo "KEEP=1: kept $T_DIR" >&2
	else
		[ -n "${T_DIR:-}" ] && rm -rf "$T_DIR"
	fi
}

# t_procs DIR: "pid: command line" of every process whose command line
# names a path under DIR (this shell's own excepted)
t_procs() {
	local f c
	for f in /proc/[0-9]*/cmdline; do
		[ "$f" = "/proc/$$/cmdline" ] && continue
		{ c=$(tr '\0' ' ' <"$f"); } 2>/dev/null || continue
		case $c in *"$1/"*) echo "${f//[^0-9]/}: $c" ;; esac
	done
}

# t_path_without CMD...: a directory for PATH holding every command of the
# usual PATH directories but CMD... ($T_DIR/path-without)
t_path_without() {
	local p=$T_DIR/path-without d f
	rm -rf "$p"
	mkdir -p "$p"
	for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
		for f in "$d"/*; do
			case " $* " in *" ${f##*/} "*) continue ;; esac
			[ -e "$p/${f##*/}" ] || ln -s "$f" "$p/${f##*/}" 2>/dev/null
		done
	done
	echo "$p"
}

t_done() {
	exit $T_FAILED
}

# jf EXPR: a Python expression over the JSON on stdin (j); exit 0 if true.
jf() {
	python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"
}
# jp EXPR: prints a Python expression over the JSON on stdin (j).
jp() {
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
export -f jf jp # for checks run through bash -c

# t_testagent: a scratch directory (the working directory from here on)
# and the test agent's in-memory statestore serving mtsctl ($CTL) through
# $RUN, which MTS_RUNDIR names.
t_testagent() {
	t_tmpdir
	CTL=$BIN/mtsctl
	RUN=$T_DIR/run
	mkdir -p "$RUN"
	printf '[node]\nrundir = %s\nstatedir = %s\n' "$RUN" "$T_DIR" >"$T_DIR/mts.conf"
	"$BUILD/tests/mts-testagent" -c "$T_DIR/mts.conf" 2>"$T_DIR/agent.log" &
	T_PIDS+=($!)
	export MTS_RUNDIR=$RUN
	check "agent socket appears" wait_for 5 test -S "$RUN/statestore/statestore.sock"
	cd "$T_DIR" || exit 1
}

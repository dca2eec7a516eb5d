# lib_shim.bash: sourced by the shim_*.sh tests — a private mts-shim with its own run/state dirs and cgroup, a busybox image, and a cleanup that leaves no container, mount or cgroup behind.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CTL=$BIN/mtsctl
SHIM_PID=

if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
	skip_all "needs root and runc"
fi

# shim_setup [EXTRA CONFIG LINES]: temp dirs, config, busybox image files.
shim_setup() {
	t_tmpdir
	trap 'shim_cleanup' EXIT
	RUN=$T_DIR/run
	STATE=$T_DIR/state
	CGP=/mts-test-$$
	mkdir -p "$RUN" "$STATE"
	export MTS_RUNDIR=$RUN
	shim_config "$@"
	"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null ||
		{ fail "mkimage"; t_done; }
}

shim_config() {
	printf '[node]\nrundir = %s\nstatedir = %s\n[shim]\ncgroup_parent = %s\nstop_grace = 2s\n%s\n' \
		"$RUN" "$STATE" "$CGP" "$*" >"$T_DIR/mts.conf"
}

# shim_start: starts mts-shim and waits for its socket.
shim_start() {
	rm -f "$RUN/shim/shim.sock"
	"$BIN/mts-shim" -c "$T_DIR/mts.conf" >>"$T_DIR/shim.log" 2>&1 &
	SHIM_PID=$!
	disown "$SHIM_PID" # no "Killed" job notice when a test kills it
	T_PIDS+=("$SHIM_PID")
	wait_for 10 test -S "$RUN/shim/shim.sock" || { fail "shim socket appears"; cat "$T_DIR/shim.log"; t_done; }
	wait_for 10 "$CTL" task ls >/dev/null || { fail "shim answers"; t_done; }
}

shim_kill9() {
	kill -9 "$SHIM_PID" 2>/dev/null
	while kill -0 "$SHIM_PID" 2>/dev/null; do sleep 0.05; done
	SHIM_PID=
}

# task_field TASK FIELD: one field of `mtsctl -o json task inspect`.
task_field() {
	"$CTL" -o json task inspect "$1" 2>/dev/null |
		python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(str(v).lower() if isinstance(v,bool) else v)' "$2"
}

# task_is TASK FIELD VALUE: for wait_for.
task_is() { [ "$(task_field "$1" "$2")" = "$3" ]; }

# Stops everything this test started: the shim, monitors, containers,
# overlay mounts and cgroups, then the temp dir.
shim_cleanup() {
	local id m p rc=$?
	# After a failure: was the shim alive, and where were its threads?
	if [ "$rc" -ne 0 ] || [ "$T_FAILED" -ne 0 ]; then
		if [ -n "$SHIM_PID" ] && [ -d "/proc/$SHIM_PID" ]; then
			echo "shim $SHIM_PID: $(grep '^State' "/proc/$SHIM_PID/status")"
			for p in /proc/"$SHIM_PID"/task/*; do
				echo "  thread ${p##*/}: $(cat "$p/wchan" 2>/dev/null) $(awk '{print $3}' "$p/stat")"
			done
		elif [ -n "$SHIM_PID" ]; then
			echo "shim $SHIM_PID: gone"
		fi
		grep -E 'busy for|warning' "$T_DIR/shim.log" 2>/dev/null | tail -20
	fi
	[ -n "$SHIM_PID" ] && kill -9 "$SHIM_PID" 2>/dev/null
	# Under `make check` the shim reports sanitizer findings in its log.
	if grep -qE 'runtime error|AddressSanitizer' "$T_DIR/shim.log" 2>/dev/null; then
		echo "FAIL: sanitizer report in the shim's log"
		grep -E -A5 'runtime error|AddressSanitizer' "$T_DIR/shim.log" | head -20
		rc=1
	fi
	for m in "$STATE"/shim/tasks/*/monitor.pid "$STATE"/*/tasks/*/monitor.pid; do
		[ -f "$m" ] || continue
		p=$(cat "$m")
		# a monitor's working directory is its task directory
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in
		"$T_DIR"/*) kill -9 "$p" 2>/dev/null ;;
		esac
	done
	for root in "$RUN"/runc "$RUN"/runc2; do
		[ -d "$root" ] || continue
		for id in $(ls "$root" 2>/dev/null); do
			runc --root "$root" delete -f "$id" >/dev/null 2>&1
		done
	done
	grep -o " $T_DIR[^ ]*" /proc/mounts | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	for c in /sys/fs/cgroup/*/"${CGP#/}"; do
		[ -d "$c" ] || continue
		find "$c" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$c" 2>/dev/null
	done
	if [ "${KEEP:-0}" = 1 ]; then
		for p in "${T_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
		echo "kept $T_DIR"
	else
		t_cleanup
	fi
	exit "$rc"
}

# lib_init.bash: helpers for the mts-init integration tests (sourced after tests/lib.sh): a node config, starting init, reading agent state.

TA=$BUILD/tests/mts-testagent
CTL=$BIN/mtsctl
POLICY=$TOP/tests/testagent/testagent.policy
ADMIN_GID=64100

# it_conf: writes $T_DIR/mts.conf with the [node] and [init] sections; the
# test appends agent sections.
it_conf() {
	RUN=$T_DIR/run
	STATE=$T_DIR/state
	export MTS_RUNDIR=$RUN
	chmod 755 "$T_DIR"
	cat >"$T_DIR/mts.conf" <<-EOC
	[node]
	name = test-node
	rundir = $RUN
	statedir = $STATE

	[init]
	admin_group = $ADMIN_GID
	EOC
}

# it_start: starts mts-init on $T_DIR/mts.conf, its log in $T_DIR/init.log.
it_start() {
	"$BIN/mts-init" -c "$T_DIR/mts.conf" "$@" >"$T_DIR/init.log" 2>&1 &
	INIT_PID=$!
	T_PIDS+=($INIT_PID)
}

# it_field NAME FIELD: a column of the agent in `mtsctl agent ls` (name
# state pid user restarts uptime seccomp last_exit); awk, not python, so
# that polling stays fast on a loaded machine.
it_field() {
	$CTL agent ls 2>/dev/null | awk -v n="$1" -v f="$2" '
	NR > 1 && $1 == n {
		split("name state pid user restarts uptime seccomp", col, " ")
		for (i = 1; i <= 7; i++) if (col[i] == f) { print ($i == "-" ? "" : $i); exit }
		if (f == "last_exit") { $1 = $2 = $3 = $4 = $5 = $6 = $7 = ""; sub(/^ +/, ""); print; exit }
	}'
}

it_state_is() { [ "$(it_field "$1" state)" = "$2" ]; }
it_all_up() { $CTL agent ls 2>/dev/null | awk 'NR > 1 && $2 != "up" { bad = 1 } END { exit bad || NR < 2 }'; }

# it_status PID FIELD: a field of /proc/PID/status.
it_status() { sed -n "s/^$2:[[:space:]]*//; T; s/[[:space:]]*\$//; p" "/proc/$1/status"; }

# it_stop: SIGTERM to init and wait for it to exit (20 s at most).
it_stop() {
	kill -TERM "$INIT_PID" 2>/dev/null
	local deadline=$((SECONDS + 20))
	while kill -0 "$INIT_PID" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
	wait "$INIT_PID" 2>/dev/null
	INIT_RC=$?
	return 0
}

# it_agents_of_init: pids of the processes whose parent is init.
it_children() { pgrep -P "$INIT_PID" 2>/dev/null; }

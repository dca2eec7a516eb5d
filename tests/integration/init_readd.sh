#!/usr/bin/env bash
# init_readd.sh: an agent removed by a reload and added back by the next one while its process still stops is one agent: listed once, never two processes at a time, started again once the old one is gone.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
it_conf
UID_D=64151
# Its sleep carries this run's pid, so a second run of this suite at the
# same time (same uid) is not counted as a second process of d.
TAG=$$
# An agent that reports ready and does not hear SIGTERM (an ignored signal
# stays ignored across exec): stopping it takes the whole stop_timeout.
cat >"$T_DIR/slow" <<EOF
#!/bin/sh
trap '' TERM
echo READY >&3
exec sleep 60.$TAG
EOF
chmod 755 "$T_DIR/slow"
cp "$T_DIR/mts.conf" "$T_DIR/base.conf"
slow="[d]
executable = $T_DIR/slow
user = $UID_D
stop_timeout = 3s
"
{ cat "$T_DIR/base.conf"; printf '%s\n' "$slow"; } >"$T_DIR/mts.conf"
it_start
check "d up" wait_for 10 it_state_is d up
p0=$(it_field d pid)
procs() { pgrep -u "$UID_D" -f "^sleep 60\\.$TAG\$" | wc -l; }

cp "$T_DIR/base.conf" "$T_DIR/mts.conf"
check "reload without d" bash -c "'$CTL' config reload | grep -q 'removed.*d'"
check "d is stopping (it ignores SIGTERM)" wait_for 2 it_state_is d stopping
{ cat "$T_DIR/base.conf"; printf '%s\n' "$slow"; } >"$T_DIR/mts.conf"
check "reload with d again" bash -c "'$CTL' config reload | grep -q 'added.*d'"
check "d listed once" test "$("$CTL" agent ls | awk '$1 == "d"' | wc -l)" = 1
max=0
for _ in $(seq 1 40); do
	n=$(procs)
	[ "$n" -gt "$max" ] && max=$n
	sleep 0.1
done
check "never two processes of d at once (at most $max)" test "$max" -le 1
check "d up again with a new process" wait_for 10 bash -c "[ \"\$('$CTL' agent ls | awk '\$1 == \"d\" {print \$2, \$3}')\" != '' ] && [ \"\$('$CTL' agent ls | awk '\$1 == \"d\" {print \$2}')\" = up ] && [ \"\$('$CTL' agent ls | awk '\$1 == \"d\" {print \$3}')\" != $p0 ]"
check "one process of d" test "$(procs)" = 1
check "still listed once" test "$("$CTL" agent ls | awk '$1 == "d"' | wc -l)" = 1
check "init stops" it_stop
t_done

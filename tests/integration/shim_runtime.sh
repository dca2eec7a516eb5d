#!/usr/bin/env bash
# shim_runtime.sh: [shim] runtime = auto|runc|crun|PATH on this host — what auto picks and why, crun refused where it cannot create containers (hybrid cgroups: what crun itself says), a task through the chosen runtime, bad values refused.
. "$(dirname "$0")/lib_shim.bash"
shim_setup

fs=$(stat -f -c %T /sys/fs/cgroup)
if [ "$fs" = cgroup2fs ]; then
	mode=unified
elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	mode=hybrid
else
	mode=v1
fi
CRUN=$(command -v crun)
echo "cgroup mode: $mode; crun: ${CRUN:-not installed}"

# shim_try VALUE: runs the shim with [shim] runtime = VALUE until it is
# ready or exits; its log in $T_DIR/try.log, exit code in TRY_RC (or
# "up" when it came up; it is then stopped).
shim_try() {
	shim_config "runtime = $1"
	rm -f "$RUN/shim/shim.sock"
	"$BIN/mts-shim" -c "$T_DIR/mts.conf" >"$T_DIR/try.log" 2>&1 &
	local p=$!
	if wait_for 10 bash -c "test -S '$RUN/shim/shim.sock' || ! kill -0 $p"; then :; fi
	if kill -0 $p 2>/dev/null; then
		TRY_RC=up
		kill $p
		wait $p 2>/dev/null
	else
		wait $p
		TRY_RC=$?
	fi
}

shim_try docker
check "runtime = docker refused (usage exit 64)" test "$TRY_RC" = 64
check "the error names the accepted values" grep -q 'expected auto, runc, crun or an absolute path' "$T_DIR/try.log"
shim_try relative/runc
check "a relative path is refused" grep -q 'a path must be absolute' "$T_DIR/try.log"
shim_try /no/such/runc
check "a missing path is refused" bash -c "test '$TRY_RC' = 64 && grep -q 'not an executable file' '$T_DIR/try.log'"

shim_try auto
check "auto comes up" test "$TRY_RC" = up
case $mode in
hybrid)
	if [ -n "$CRUN" ]; then
		check "auto picks runc on a hybrid host and says why" \
			grep -q 'runtime /.*runc: auto: runc, not crun: crun refuses to create containers on a hybrid' "$T_DIR/try.log"
	else
		check "auto picks runc on a hybrid host" grep -q 'runtime /.*runc: auto: runc on a hybrid' "$T_DIR/try.log"
	fi
	;;
unified)
	if [ -n "$CRUN" ]; then
		check "auto picks crun on a unified host" grep -q 'runtime /.*crun: auto: crun on a unified' "$T_DIR/try.log"
	fi
	;;
v1)
	check "auto picks runc on a v1 host" grep -q 'runtime /.*runc: auto: runc on a cgroup v1' "$T_DIR/try.log"
	;;
esac

if [ -n "$CRUN" ]; then
	check "crun --version works" bash -c "'$CRUN' --version | grep -q '^crun version'"
	check "crun list on an empty root works" bash -c "'$CRUN' --root '$T_DIR/crun-root' list >/dev/null 2>&1"
	shim_try crun
	if [ "$mode" = hybrid ]; then
		check "runtime = crun refused on a hybrid host (exit 64)" test "$TRY_RC" = 64
		check "with the reason" grep -q 'crun cannot create containers on a hybrid cgroup v1+v2 host' "$T_DIR/try.log"
		shim_try "$CRUN"
		check "crun by path refused on a hybrid host too" test "$TRY_RC" = 64
		# What crun itself says here: the reason for the refusal above.
		B=$T_DIR/crun-bundle
		mkdir -p "$B/rootfs/bin"
		cp "$(command -v busybox)" "$B/rootfs/bin/busybox"
		(cd "$B" && runc spec && sed -i 's/"terminal": true/"terminal": false/; s/"sh"$/"\/bin\/busybox", "true"/' config.json)
		out=$("$CRUN" --root "$T_DIR/crun-root" run --detach --bundle "$B" probe 2>&1)
		echo "crun run: $out"
		check "crun run fails here: cgroups in hybrid mode not supported" \
			grep -q 'cgroups in hybrid mode not supported' <<<"$out"
		"$CRUN" --root "$T_DIR/crun-root" delete -f probe >/dev/null 2>&1
	else
		check "runtime = crun comes up on a $mode host" test "$TRY_RC" = up
	fi
fi

# The chosen runtime runs a task (by path, to cover that form).
if [ "$mode" = unified ] && [ -n "$CRUN" ]; then RT=$CRUN; else RT=$(command -v runc); fi
shim_config "runtime = $RT"
shim_start
check "shim logs the configured runtime" grep -q "runtime $RT: configured ($RT)" "$T_DIR/shim.log"
$CTL image import "$T_DIR/busybox-oci" >/dev/null
$CTL task run --name rt busybox -- sh -c 'echo via-runtime; sleep 1000' >/dev/null
check "task runs through $RT" task_is rt state running
check "its output is logged" wait_for 10 bash -c "$CTL logs rt | grep -qx via-runtime"
check "exec through $RT" bash -c "test \"\$($CTL exec rt -- echo exec-ok)\" = exec-ok"
$CTL task stop --grace 0s rt >/dev/null
check "stopped" task_is rt state exited
$CTL task rm rt
check "no container left in the runtime's root" test -z "$(ls "$RUN/runc")"
t_done

#!/usr/bin/env bash
# shim_rootfs.sh: hostile image content the shim reads when it creates a task — /etc/passwd as a link to /etc/shadow, as a link climbing out with ../, as a FIFO — is resolved inside the image (never on the host) and never blocks the shim, in overlay and copy modes.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
shim_start
MK="python3 $TOP/tests/integration/shim_images.py"
host_uid=$(awk -F: '$1 == "root" {print $3}' /etc/shadow)

for v in shadow escape fifo; do
	$MK passwd "$T_DIR/pw-$v" "$T_DIR/busybox-oci" "$v"
	check "import evil:$v" bash -c "$CTL image import $T_DIR/pw-$v >/dev/null"
done

rootfs_checks() { # MODE
	local m=$1 out t0
	# A link to /etc/shadow means the image's own /etc/shadow, as it does
	# for the container's processes; before, the shim read the host's and
	# the task ran as uid $host_uid (field 3 of the host's root line).
	$CTL task run --name "sh$m" --user root evil:shadow -- id >/dev/null
	wait_for 10 task_is "sh$m" state exited
	out=$($CTL logs "sh$m")
	check "($m) etc/passwd -> /etc/shadow is the image's shadow: $out" grep -qE '^uid=4242[( ].*gid=4243' <<<"$out"
	check "($m) and not the host's (uid $host_uid)" bash -c "! grep -q '^uid=$host_uid[( ]' <<<'$out'"
	$CTL task rm "sh$m"
	# Climbing with ../ stays inside the image, which has no etc/shadow.
	out=$($CTL task run --name "esc$m" --user root evil:escape -- id 2>&1)
	check "($m) etc/passwd -> ../../../etc/shadow: user not found ($out)" grep -q 'user "root" not found in the image' <<<"$out"
	check "($m) and no task for it" bash -c "! $CTL task inspect esc$m >/dev/null 2>&1"
	# A FIFO is refused at once, whatever the user: it used to block the
	# shim's loop until someone opened it for writing, and runc, which
	# reads /etc/passwd for every task, would block on it too.
	for u in root 0:0 ""; do
		t0=$SECONDS
		out=$(timeout 20 "$CTL" task run --name "fifo$m" ${u:+--user $u} evil:fifo -- id 2>&1)
		check "($m) a FIFO etc/passwd is refused, user '$u' ($out)" grep -q "the image's /etc/passwd: not a regular file" <<<"$out"
		check "($m) at once ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 5
		check "($m) the shim still answers" timeout 5 "$CTL" task ls
	done
}

rootfs_checks overlay
shim_kill9
shim_config "rootfs = copy"
shim_start
rootfs_checks copy
check "the shim's loop never blocked" bash -c "! grep -q 'busy for' $T_DIR/shim.log"
t_done

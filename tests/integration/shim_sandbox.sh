#!/usr/bin/env bash
# shim_sandbox.sh: mts-shim under mts-init with its deny-list filter (config/seccomp/shim.policy) next to a sandboxed statestore — real busybox containers run, log, exec, stop, pass HTTP health checks and get OOM-killed through it; the shim's filter is inherited below the container's own profile, both bite, and nothing is ever killed by seccomp.
. "$(dirname "$0")/lib_shim.bash"
. "$(dirname "$0")/lib_init.bash"
shim_setup
trap 'it_stop; shim_cleanup' EXIT
UID_SS=64190
dmesg_mark=$(dmesg 2>/dev/null | wc -l)

# sandbox_conf yes|no: the node's config, container profile on or off.
sandbox_conf() {
	it_conf
	cat >>"$T_DIR/mts.conf" <<-EOC

	[statestore]
	executable = $BIN/mts-statestore
	user = $UID_SS
	seccomp = $TOP/config/seccomp/statestore.policy
	acl_read = 0
	acl_write = 0

	[shim]
	executable = $BIN/mts-shim
	user = root
	capabilities = all
	seccomp = $TOP/config/seccomp/shim.policy
	after = statestore
	restart = always
	cgroup_parent = $CGP
	stop_grace = 2s
	container_seccomp = $1
	EOC
}
sandbox_conf yes
it_start
check "statestore and shim come up under init" wait_for 30 it_all_up
SHIM=$(it_field shim pid)
if [ -z "$SHIM" ]; then fail "shim pid from agent ls"; cat "$T_DIR/init.log"; t_done; fi
NODE=$(tr -d '\0' <"/proc/$SHIM/environ" | grep -ao 'MTS_NODE_ID=[0-9a-f]*' | cut -d= -f2)

# The shim's own sandbox, from /proc.
check "shim runs as root (runc needs it)" [ "$(it_status "$SHIM" Uid | awk '{print $1 $2 $3}')" = 000 ]
check "shim Seccomp: 2 (filter mode)" [ "$(it_status "$SHIM" Seccomp)" = 2 ]
check "shim has exactly one filter, its own" [ "$(it_status "$SHIM" Seccomp_filters)" = 1 ]
check "shim NoNewPrivs: 1 (set by init; the runtime inherits it)" [ "$(it_status "$SHIM" NoNewPrivs)" = 1 ]
check "shim keeps its capabilities (runc needs them all)" [ "$(it_status "$SHIM" CapEff)" = "$(it_status $$ CapBnd)" ]
check "init logged no policy error for the shim" bash -c "! grep -qi 'shim.*seccomp.*\\(error\\|fail\\)' '$T_DIR/init.log'"

$CTL image import "$T_DIR/busybox-oci" >/dev/null
check "image imported through the sandboxed shim" bash -c "$CTL image ls | grep -q '^busybox:latest'"

# run, logs, exit code
$CTL task run --name hello busybox -- sh -c 'echo hello-sandbox; exit 3' >/dev/null
check "task exits" wait_for 15 task_is hello state exited
check "exit code 3 recorded" task_is hello exit_code 3
check "logs show its output" bash -c "$CTL logs hello | grep -qx hello-sandbox"
check "its record reaches the statestore" wait_for 15 bash -c "$CTL state get --value t/$NODE/hello 2>/dev/null | grep -qa exited"

# HTTP health, exec, and the seccomp state of a container below the shim.
$CTL task run --name web --health-http http://127.0.0.1:8080/ --health-interval 300ms \
	--health-retries 2 busybox -- sh -c 'httpd -p 8080 -h /var/www; while :; do sleep 1; done' >/dev/null
check "web runs" task_is web state running
check "web turns healthy (HTTP probe)" wait_for 15 task_is web health healthy
CPID=$(task_field web pid)
check "container NoNewPrivs: 1" [ "$(it_status "$CPID" NoNewPrivs)" = 1 ]
check "container has two filters: the shim's, inherited, and its own profile" \
	[ "$(it_status "$CPID" Seccomp_filters)" = 2 ]
out=$($CTL exec web -- sh -c 'echo exec-ok; grep Seccomp_filters /proc/self/status')
check "exec runs under the inherited filter" grep -qx exec-ok <<<"$out"
check "an exec'd process has both filters too" grep -qP '^Seccomp_filters:\s+2$' <<<"$out"
$CTL exec web -- killall httpd >/dev/null
check "web turns unhealthy once httpd is gone" wait_for 15 task_is web health unhealthy
t0=$(date +%s%3N)
$CTL task stop web >/dev/null
t1=$(date +%s%3N)
check "stop: SIGTERM ignored, SIGKILL at the 2 s grace" task_is web signal 9
check "stop took the grace ($((t1 - t0)) ms)" test $((t1 - t0)) -ge 2000 -a $((t1 - t0)) -lt 10000

# OOM kill
$CTL task run --name oom -m 24M busybox -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived' >/dev/null
check "OOM kill recorded" wait_for 20 task_is oom oom_killed true

# Syscalls from inside (python3 from the host's /usr, read-only).
MOUNTS=(--mount /usr:/usr:ro --mount /usr/lib:/lib:ro --mount /usr/lib64:/lib64:ro
	--mount "$TOP/tests/integration/shim_syscalls.py:/probe.py:ro")
# syscall_is TASK NAME RESULT: a line of the probe's output.
syscall_is() { $CTL logs "$1" | grep -qx "$2 $3"; }
$CTL task run --name sys1 "${MOUNTS[@]}" busybox -- /usr/bin/python3 /probe.py >/dev/null
check "syscall probe (profile on) ran" wait_for 20 task_is sys1 exit_code 0
echo "--- syscalls with the container profile:"; $CTL logs sys1
for n in unshare_user keyctl mount; do
	check "container profile: $n fails with EPERM" syscall_is sys1 "$n" "errno EPERM"
done
for n in kcmp process_vm_readv ptrace_traceme userfaultfd kexec_load bpf; do
	check "$n fails with EPERM inside" syscall_is sys1 "$n" "errno EPERM"
done
check "no probe was killed" bash -c "! $CTL logs sys1 | grep -q killed"

# Without the container profile only the shim's deny-list is left: what
# it denies still fails, what only the profile denied now works. Init
# restarts the shim with the new config; containers keep running.
$CTL task run --name survivor busybox -- sleep 1000 >/dev/null
spid=$(task_field survivor pid)
sandbox_conf no
$CTL agent restart shim >/dev/null
new_shim_up() { local p; p=$(it_field shim pid); [ -n "$p" ] && [ "$p" != "$SHIM" ] && it_state_is shim up; }
check "shim restarted by init" wait_for 20 new_shim_up
SHIM2=$(it_field shim pid)
check "restarted shim is sandboxed too" [ "$(it_status "$SHIM2" Seccomp)" = 2 ]
check "a container outlived the shim's restart" wait_for 10 bash -c "$CTL task ls 2>/dev/null | grep -q 'survivor.*running'"
check "with the same pid" [ "$(task_field survivor pid)" = "$spid" ]
$CTL task run --name sys2 "${MOUNTS[@]}" busybox -- /usr/bin/python3 /probe.py >/dev/null
check "syscall probe (profile off) ran" wait_for 20 task_is sys2 exit_code 0
echo "--- syscalls under the shim's filter only:"; $CTL logs sys2
check "without the profile: unshare(CLONE_NEWUSER) works" syscall_is sys2 unshare_user ok
check "without the profile: keyctl works" syscall_is sys2 keyctl ok
for n in kcmp process_vm_readv ptrace_traceme userfaultfd; do
	check "shim deny-list: $n fails with EPERM in a container" syscall_is sys2 "$n" "errno EPERM"
done
$CTL task run --name one busybox -- sleep 1000 >/dev/null
check "a container without its profile has one filter: the shim's" \
	[ "$(it_status "$(task_field one pid)" Seccomp_filters)" = 1 ]

# Nothing was killed by a filter, anywhere, during the whole run.
for t in hello web oom sys1 sys2; do $CTL task rm "$t"; done
for t in survivor one; do $CTL task rm -f "$t"; done
check "all tasks removed" wait_for 10 bash -c "test \$($CTL task ls | tail -n +2 | wc -l) -eq 0"
check "shim never restarted after a crash" [ "$(it_field shim restarts)" = 0 ]
check "no SIGSYS in init's log" bash -c "! grep -E 'SIGSYS|signal 31|denied syscall' '$T_DIR/init.log'"
check "no seccomp kill in the kernel log" \
	bash -c "! dmesg 2>/dev/null | tail -n +$((dmesg_mark + 1)) | grep -E 'type=1326.* sig=31'"
t_done

#!/usr/bin/env bash
# tests/bench/deploy.sh: deploy to running of 30 replicas — a 1-node mts cluster against a 1-node Docker Swarm (same Compose file, same busybox image, alternating, median of 3 each), a 3-node mts cluster; 1,000 replicas (tiny reservations) to running on 1 node and on 3 nodes, and the RSS of mts-schedd and mts-reconciled idle and holding them.
#
# Docker is a peer to compare with, never a dependency of mts: this bench
# installs Debian's docker.io itself when it is missing (DEPLOY_BENCH_DOCKER=0
# skips Swarm), runs its own dockerd in a network namespace of its own (its
# bridges and iptables rules never touch the host's) with a private data
# root and cgroup parent, and removes what it made. Both sides are timed the same way: from the start of the
# deploy command (detached) until `service ls` shows 30 running, polled
# every 100 ms.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
export BUILD
BIN=$BUILD/bin
CLUSTER=$TOP/scripts/cluster
N=${DEPLOY_BENCH_REPLICAS:-30}
ROUNDS=${DEPLOY_BENCH_ROUNDS:-3}
MANY=${DEPLOY_BENCH_MANY:-1000} # 0: no 1,000-task runs
MANY_WAIT=${DEPLOY_BENCH_MANY_WAIT:-300}
USE_DOCKER=${DEPLOY_BENCH_DOCKER:-1}
DOCKER=/usr/bin/docker # Debian's; another docker in PATH may be a bare client
T=$(mktemp -d /tmp/mts-bench-deploy.XXXXXX)
chmod o+x "$T" # scripts/cluster runs the agents as their own uids
DOCKERD_PID=
DOCK="$DOCKER -H unix://$T/docker.sock"
NETNS=mts-bench-docker-$$
DCG=/mts-bench-docker-$$

if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
	echo "deploy bench: skipped (needs root and runc)"
	exit 0
fi

cleanup() {
	MTS_CLUSTER_DIR=$T/c1 "$CLUSTER" down --purge >/dev/null 2>&1
	MTS_CLUSTER_DIR=$T/c3 "$CLUSTER" down --purge >/dev/null 2>&1
	MTS_CLUSTER_DIR=$T/c0 "$CLUSTER" down --purge >/dev/null 2>&1
	if [ -n "$DOCKERD_PID" ]; then
		$DOCK swarm leave --force >/dev/null 2>&1
		kill "$DOCKERD_PID" 2>/dev/null
		wait "$DOCKERD_PID" 2>/dev/null
		grep -o " $T/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
		for c in /sys/fs/cgroup"$DCG" /sys/fs/cgroup/*"$DCG"; do
			[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	ip netns del "$NETNS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

row() { printf '%-52s %12s %s\n' "$1" "$2" "$3"; }
now_ms() { date +%s%3N; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms / 1000}'; }

"$TOP/scripts/mkimage" "$T/busybox-oci" >/dev/null || { echo "mkimage failed"; exit 1; }
cat >"$T/bench.yml" <<YML
version: "3.8" # docker 20.10's stack deploy wants one
services:
  app:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy:
      replicas: $N
YML

# --- mts ----------------------------------------------------------------------

# mts_up DIR NODES: a cluster with shims, busybox imported on every node.
mts_up() {
	local i
	MTS_CLUSTER_DIR=$1 MTS_CLUSTER_SHIM=1 "$CLUSTER" up "$2" >"$T/up.log" 2>&1 ||
		{ cat "$T/up.log"; exit 1; }
	for i in $(seq 1 "$2"); do
		MTS_CLUSTER_DIR=$1 "$CLUSTER" ctl "$i" image import "$T/busybox-oci" >/dev/null ||
			{ echo "import on node $i failed"; exit 1; }
	done
	# as a settled cluster: every node's d/ digest on node 1 (owners
	# place on the nodes whose digest they hold)
	for _ in $(seq 1 150); do
		[ "$(MTS_CLUSTER_DIR=$1 "$CLUSTER" ctl 1 state ls d/ | tail -n +2 | wc -l)" = "$2" ] && break
		sleep 0.2
	done
}
mctl() { local d=$1; shift; MTS_CLUSTER_DIR=$d "$CLUSTER" ctl 1 "$@"; }
mts_running() { # DIR SERVICE
	mctl "$1" -o json service ls 2>/dev/null |
		python3 -c 'import json,sys; print(next((s["running"] for s in json.load(sys.stdin) if s["name"] == sys.argv[1]), 0))' "$2"
}
# mts_tasks DIR: containers the cluster's shims still hold
mts_tasks() {
	local d=$1 i n=0 c
	for i in $(seq 1 "$(ls -d "$d"/n* | wc -l)"); do
		c=$(MTS_CLUSTER_DIR=$d "$CLUSTER" ctl "$i" -o json task ls 2>/dev/null | python3 -c "import json,sys; print(len(json.load(sys.stdin)))" 2>/dev/null || echo 0)
		n=$((n + c))
	done
	echo $n
}

# mts_round DIR STACK: ms from deploy to N running; then the stack removed
# and waited for until no container is left.
mts_round() {
	local d=$1 st=$2 t0 t1 deadline
	t0=$(now_ms)
	mctl "$d" deploy -c "$T/bench.yml" --stack "$st" --detach >/dev/null || return 1
	deadline=$((SECONDS + 180))
	until [ "$(mts_running "$d" "${st}_app")" = "$N" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
	t1=$(now_ms)
	mctl "$d" stack rm "$st" >/dev/null
	deadline=$((SECONDS + 180))
	while [ "$(mts_tasks "$d")" != 0 ] && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
	echo $((t1 - t0))
}

# --- Docker Swarm -------------------------------------------------------------

docker_setup() {
	if ! [ -x "$DOCKER" ] || ! command -v dockerd >/dev/null; then
		echo "   installing Debian's docker.io for the comparison (not an mts dependency)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io >"$T/apt.log" 2>&1 ||
			{ echo "   apt-get install docker.io failed: Swarm skipped"; return 1; }
	fi
	mkdir -p "$T/docker" "$T/docker-exec"
	ip netns add "$NETNS" && ip netns exec "$NETNS" ip link set lo up ||
		{ echo "   no network namespace for dockerd: Swarm skipped"; return 1; }
	# nsenter, not ip netns exec: that remounts /sys and hides the cgroups
	nsenter --net=/run/netns/"$NETNS" dockerd --data-root "$T/docker" \
		--exec-root "$T/docker-exec" -H "unix://$T/docker.sock" \
		--pidfile "$T/docker.pid" --cgroup-parent "$DCG" \
		>"$T/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	for _ in $(seq 1 150); do $DOCK info >/dev/null 2>&1 && break; sleep 0.2; done
	$DOCK info >/dev/null 2>&1 || { echo "   dockerd did not start:"; tail -5 "$T/dockerd.log"; return 1; }
	$DOCK swarm init --advertise-addr 127.0.0.1 >/dev/null 2>&1 ||
		{ echo "   docker swarm init failed"; return 1; }
	skopeo copy -q "oci:$T/busybox-oci" "docker-archive:$T/busybox.tar:busybox:latest" >/dev/null &&
		$DOCK load -i "$T/busybox.tar" >/dev/null ||
		{ echo "   loading busybox into docker failed"; return 1; }
}
swarm_running() { # STACK
	$DOCK service ls --filter "name=${1}_app" --format '{{.Replicas}}' 2>/dev/null | cut -d/ -f1
}
swarm_round() { # STACK
	local st=$1 t0 t1 deadline
	t0=$(now_ms)
	$DOCK stack deploy -c "$T/bench.yml" "$st" >/dev/null 2>&1 || return 1
	deadline=$((SECONDS + 180))
	until [ "$(swarm_running "$st")" = "$N" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
	t1=$(now_ms)
	$DOCK stack rm "$st" >/dev/null 2>&1
	deadline=$((SECONDS + 180))
	while [ -n "$($DOCK ps -q)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
	echo $((t1 - t0))
}

# --- rounds -------------------------------------------------------------------

# RSS of schedd and reconciled on the idle 1-node cluster
rss_of() { # DIR AGENT: KiB, "-" when not running
	local p
	p=$(MTS_CLUSTER_DIR=$1 "$CLUSTER" ctl 1 -o json agent ls 2>/dev/null |
		python3 -c 'import json,sys; print(next((a["pid"] for a in json.load(sys.stdin) if a["name"] == sys.argv[1] and a.get("pid")), ""))' "$2")
	[ -n "$p" ] && awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo -
}
mts_up "$T/c1" 1
if ! MTS_CLUSTER_DIR=$T/c1 "$CLUSTER" ctl 1 agent ls 2>/dev/null | grep -q '^reconciled  *up '; then
	echo "deploy bench: skipped (the nodes run no mts-reconciled)"
	exit 0
fi
sleep 2
s_idle=$(rss_of "$T/c1" schedd) r_idle=$(rss_of "$T/c1" reconciled)
swarm=0
if [ "$USE_DOCKER" = 1 ] && [ "$ROUNDS" -gt 0 ]; then docker_setup && swarm=1; fi
M1=() SW=()
for r in $(seq 1 "$ROUNDS"); do
	v=$(mts_round "$T/c1" "b$r") || { echo "mts round $r did not reach $N running"; exit 1; }
	M1+=("$v")
	if [ $swarm = 1 ]; then
		v=$(swarm_round "s$r") || { echo "swarm round $r did not reach $N running"; exit 1; }
		SW+=("$v")
	fi
done
if [ "$ROUNDS" -gt 0 ]; then
	echo "   1-node mts (ms): ${M1[*]}"
	m1=$(median "${M1[@]}")
fi
[ $swarm = 1 ] && echo "   1-node Swarm (ms): ${SW[*]}"
[ $swarm = 1 ] && sw=$(median "${SW[@]}")

# many_round DIR NODES: a service of MANY replicas of sleep, each reserving
# 1 millicore and 1 MiB, deployed on the cluster (real containers); sets
# many_ms (to all running, or to the give-up), many_run, and the RSS of
# node 1's schedd and reconciled once they run; then the stack is removed
# (reconciled stops them: scripts/cluster's down would kill the
# containers under a live shim, which restarts them)
sed -e "s/replicas: $N/replicas: $MANY/" \
	-e 's/^      replicas:.*/&\n      resources: {reservations: {cpus: "0.001", memory: 1M}}/' \
	"$T/bench.yml" >"$T/many.yml"
many_round() {
	local d=$1 t0 deadline last=-1 n
	t0=$(now_ms)
	mctl "$d" deploy -c "$T/many.yml" --stack many --detach >/dev/null
	deadline=$((SECONDS + MANY_WAIT))
	while :; do
		n=$(mts_running "$d" many_app)
		[ "$n" = "$MANY" ] || [ $SECONDS -ge $deadline ] && break
		if [ $((SECONDS % 10)) = 0 ] && [ "$n" != "$last" ]; then
			echo "   $2 node(s): $n of $MANY running after $((($(now_ms) - t0) / 1000)) s"
			last=$n
		fi
		sleep 1
	done
	many_ms=$(($(now_ms) - t0))
	many_run=$(mts_running "$d" many_app)
	many_s=$(rss_of "$d" schedd) many_r=$(rss_of "$d" reconciled)
	t0=$(now_ms)
	mctl "$d" stack rm many >/dev/null
	deadline=$((SECONDS + 600))
	while [ "$(mts_tasks "$d")" != 0 ] && [ $SECONDS -lt $deadline ]; do sleep 2; done
	echo "   $2 node(s): stack rm of $many_run tasks took $((($(now_ms) - t0) / 1000)) s"
}
if [ "$MANY" -gt 0 ]; then
	many_round "$T/c1" 1
	m1_ms=$many_ms m1_run=$many_run s_many=$many_s r_many=$many_r
fi
MTS_CLUSTER_DIR=$T/c1 "$CLUSTER" down --purge >/dev/null 2>&1

# the same MANY placed and assigned on a node without a shim: the time
# until every t/ record is written is the orchestration's share (owner,
# Place, Prepare/Commit with the journal, Assign), without the containers
place_ms=
if [ "$MANY" -gt 0 ]; then
	MTS_CLUSTER_DIR=$T/c0 MTS_CLUSTER_SHIM=0 "$CLUSTER" up 1 >"$T/up.log" 2>&1 ||
		{ cat "$T/up.log"; exit 1; }
	t0=$(now_ms)
	mctl "$T/c0" deploy -c "$T/many.yml" --stack many --detach >/dev/null
	deadline=$((SECONDS + 120))
	until [ "$(mctl "$T/c0" state ls t/ 2>/dev/null | tail -n +2 | wc -l)" -ge "$MANY" ] ||
		[ $SECONDS -ge $deadline ]; do sleep 0.2; done
	place_ms=$(($(now_ms) - t0))
	place_n=$(mctl "$T/c0" state ls t/ 2>/dev/null | tail -n +2 | wc -l)
	MTS_CLUSTER_DIR=$T/c0 "$CLUSTER" down --purge >/dev/null 2>&1
fi

mts_up "$T/c3" 3
M3=()
for r in $(seq 1 "$ROUNDS"); do
	v=$(mts_round "$T/c3" "c$r") || { echo "3-node round $r did not reach $N running"; exit 1; }
	M3+=("$v")
done
if [ "$ROUNDS" -gt 0 ]; then
	echo "   3-node mts (ms): ${M3[*]}"
	m3=$(median "${M3[@]}")
fi
if [ "$MANY" -gt 0 ]; then
	many_round "$T/c3" 3
	m3_ms=$many_ms m3_run=$many_run s3_many=$many_s r3_many=$many_r
fi

row "metric" "value" "target"
if [ "$ROUNDS" -gt 0 ]; then
	row "deploy to $N running, 1-node mts (s, median of $ROUNDS)" "$(secs "$m1")" ""
	if [ $swarm = 1 ]; then
		row "deploy to $N running, 1-node Swarm (s, median of $ROUNDS)" "$(secs "$sw")" ""
		row "mts / Swarm" "$(awk -v a="$m1" -v b="$sw" 'BEGIN {printf "%.2f", a / b}')" "<= 0.50"
	fi
	row "deploy to $N running, 3-node mts (s, median of $ROUNDS)" "$(secs "$m3")" ""
fi
row "mts-schedd RSS idle (KiB)" "$s_idle" ""
row "mts-reconciled RSS idle (KiB)" "$r_idle" ""
if [ "$MANY" -gt 0 ]; then
	row "deploy to $m1_run of $MANY running, 1-node mts (s)" "$(secs "$m1_ms")" ""
	row "$place_n of $MANY placed and assigned, 1 node, no shim (s)" "$(secs "$place_ms")" ""
	row "deploy to $m3_run of $MANY running, 3-node mts (s)" "$(secs "$m3_ms")" ""
	row "mts-schedd RSS, 1 node holding $m1_run tasks (KiB)" "$s_many" ""
	row "mts-reconciled RSS, 1 node holding $m1_run tasks (KiB)" "$r_many" ""
	row "mts-schedd RSS, node 1 of 3 during $m3_run (KiB)" "$s3_many" ""
	row "mts-reconciled RSS, node 1 of 3 during $m3_run (KiB)" "$r3_many" ""
fi

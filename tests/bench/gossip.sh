#!/usr/bin/env bash
# tests/bench/gossip.sh: gossipd benchmarks on loopback — write propagation p50/p99 (5 and 10 nodes), failure detection vs HashiCorp Serf, anti-entropy catch-up records/s, gossipd RSS at 10 nodes.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
export BUILD
CLUSTER=$TOP/scripts/cluster
LOAD=$BUILD/tests/gossip_load
CATCHUP=${GOSSIP_BENCH_CATCHUP:-100000}
T=$(mktemp -d /tmp/mts-bench-gossip.XXXXXX)
chmod o+x "$T" # scripts/cluster runs the agents as their own uids
SERF_PIDS=()
cleanup() {
	local p
	MTS_CLUSTER_DIR=$T/c "$CLUSTER" down >/dev/null 2>&1
	for p in "${SERF_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

row() { printf '%-44s %12s %s\n' "$1" "$2" "$3"; }

up() { # N [extra conf]: on ports scripts/cluster chooses free
	MTS_CLUSTER_DIR=$T/c
	MTS_CLUSTER_CONF=${2:-}
	export MTS_CLUSTER_DIR MTS_CLUSTER_CONF
	unset MTS_CLUSTER_PORT
	"$CLUSTER" down --purge >/dev/null 2>&1
	"$CLUSTER" up "$1" >"$T/up.log" 2>&1 || { cat "$T/up.log"; exit 1; }
}
run() { echo "$T/c/n$1/run"; }

# ms since the epoch of a log line "HH:MM:SS.mmm ..." (today).
log_ms() { date -d "$(date +%F) $1" +%s%3N; }

all_alive() { # N
	local i
	for i in $(seq 1 "$1"); do
		[ "$("$CLUSTER" ctl "$i" node ls 2>/dev/null | grep -c ' alive ')" = "$1" ] || return 1
	done
}
wait_alive() { # N
	local deadline=$((SECONDS + 30))
	until all_alive "$1"; do
		[ $SECONDS -ge $deadline ] && { echo "cluster did not form" >&2; exit 1; }
		sleep 0.2
	done
}

propagation() { # N
	local n=$1 i args=() out
	for i in $(seq 1 "$n"); do args+=(-p "$(run "$i")" -w "$(run "$i")"); done
	out=$("$LOAD" "${args[@]}" -n 500 -r 100 -k bench/ -t 30)
	row "propagation to all $n nodes, p50" "$(echo "$out" | awk '/^p50_ms/ {print $2}')" ms
	row "propagation to all $n nodes, p99" "$(echo "$out" | awk '/^p99_ms/ {print $2}')" ms
}

# Kills node N of an N-node cluster; prints "first last" ms until the other
# nodes logged it dead.
# wait_in_all SECS PATTERN FILE...: until every FILE holds PATTERN (a
# fixed string), or SECS have passed.
wait_in_all() {
	local deadline=$((SECONDS + $1)) pat=$2 f cnt
	shift 2
	while :; do
		cnt=0
		for f in "$@"; do grep -qsF -- "$pat" "$f" && cnt=$((cnt + 1)); done
		[ $cnt -eq $# ] && return 0
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

mts_detection() { # N
	local n=$1 t0 first= last= i line ms
	"$CLUSTER" kill "$n"
	t0=$(date +%s%3N)
	wait_in_all 30 "(n$n) is dead" $(for i in $(seq 1 $((n - 1))); do echo "$T/c/n$i/log/gossipd.log"; done)
	for i in $(seq 1 $((n - 1))); do
		line=$(grep "(n$n) is dead" "$T/c/n$i/log/gossipd.log" | tail -1)
		[ -n "$line" ] || continue
		ms=$(($(log_ms "${line%% *}") - t0))
		[ -z "$first" ] || [ "$ms" -lt "$first" ] && first=$ms
		[ -z "$last" ] || [ "$ms" -gt "$last" ] && last=$ms
	done
	echo "${first:-none} ${last:-none}"
}

serf_detection() { # N: agents on base+I, their RPC on base+50+I
	local n=$1 base i t0 first= last= ms deadline
	base=$("$TOP/scripts/freeport" 60 "$T") || { echo "none none"; return; }
	mkdir -p "$T/serf"
	cat >"$T/serf/handler" <<'EOF'
#!/bin/sh
while read -r name rest; do echo "$(date +%s%3N) $name" >>"$SERF_OUT"; done
EOF
	chmod +x "$T/serf/handler"
	for i in $(seq 1 "$n"); do
		SERF_OUT=$T/serf/failed.$i serf agent -node="s$i" \
			-bind="127.0.0.1:$((base + i))" \
			-rpc-addr="127.0.0.1:$((base + 50 + i))" \
			-event-handler="member-failed=$T/serf/handler" \
			>"$T/serf/agent.$i.log" 2>&1 &
		SERF_PIDS+=($!)
	done
	sleep 1
	for i in $(seq 2 "$n"); do
		serf join -rpc-addr="127.0.0.1:$((base + 51))" \
			"127.0.0.1:$((base + i))" >/dev/null 2>&1
	done
	deadline=$((SECONDS + 20))
	until [ "$(serf members -rpc-addr="127.0.0.1:$((base + 51))" -status=alive | wc -l)" = "$n" ]; do
		[ $SECONDS -ge $deadline ] && break
		sleep 0.2
	done
	kill -9 "${SERF_PIDS[$((n - 1))]}"
	t0=$(date +%s%3N)
	wait_in_all 40 "s$n" $(for i in $(seq 1 $((n - 1))); do echo "$T/serf/failed.$i"; done)
	for i in $(seq 1 $((n - 1))); do
		ms=$(grep -s "s$n" "$T/serf/failed.$i" | head -1 | awk '{print $1}')
		[ -n "$ms" ] || continue
		ms=$((ms - t0))
		[ -z "$first" ] || [ "$ms" -lt "$first" ] && first=$ms
		[ -z "$last" ] || [ "$ms" -gt "$last" ] && last=$ms
	done
	for i in "${SERF_PIDS[@]}"; do kill -9 "$i" 2>/dev/null; done
	SERF_PIDS=()
	rm -rf "$T/serf"
	echo "${first:-none} ${last:-none}"
}

rss_kib() { # N: max and mean VmRSS of the gossipd processes
	local i p max=0 sum=0 v
	for i in $(seq 1 "$1"); do
		p=$("$CLUSTER" ctl "$i" agent ls | awk '$1 == "gossipd" {print $3}')
		v=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status")
		sum=$((sum + v))
		[ "$v" -gt "$max" ] && max=$v
	done
	echo "$max $((sum / $1))"
}

catchup() { # records
	local n=$1 t0 t1 i args=()
	up 3 "ae_rate = 256M\n[statestore]\nsync = no"
	wait_alive 3
	"$CLUSTER" kill 3
	for i in 1 2; do args+=(-p "$(run "$i")"); done
	"$LOAD" "${args[@]}" -n "$n" -s 100 -k catch/ >/dev/null
	# The target is what nodes 1 and 2 agree on once the writes have
	# crossed between them (the load returns when its own puts are in).
	local want="" r1 r2 settle=$((SECONDS + 120))
	while [ $SECONDS -lt $settle ]; do
		r1=$("$CLUSTER" ctl 1 state root | awk '/^root:/ {print $2}')
		r2=$("$CLUSTER" ctl 2 state root | awk '/^root:/ {print $2}')
		[ -n "$r1" ] && [ "$r1" = "$r2" ] && { want=$r1; break; }
		sleep 0.1
	done
	[ -n "$want" ] || { row "anti-entropy catch-up of $n records" "nodes 1 and 2 never agreed" ""; return; }
	"$CLUSTER" start 3 >/dev/null 2>&1
	t0=$(date +%s%3N)
	local deadline=$((SECONDS + 600))
	# node 3 has caught up when it holds what node 1 holds now: its own
	# agents write on start (schedd's n/ record), so the root moves on
	# from $want
	until r3=$("$CLUSTER" ctl 3 state root 2>/dev/null | awk '/^root:/ {print $2}') &&
		[ -n "$r3" ] && [ "$r3" = "$("$CLUSTER" ctl 1 state root | awk '/^root:/ {print $2}')" ]; do
		[ $SECONDS -ge $deadline ] && { row "anti-entropy catch-up of $n records" "timeout" ""; return; }
		sleep 0.2
	done
	t1=$(date +%s%3N)
	row "anti-entropy catch-up of $n records" "$((t1 - t0))" ms
	row "anti-entropy catch-up rate" "$((n * 1000 / (t1 - t0 + 1)))" records/s
	row "  bytes received by the returning node" "$("$CLUSTER" ctl 3 -o json cluster stats |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["rx_bytes"])')" bytes
}

echo "gossipd benchmarks (loopback, $(nproc) CPUs)"
row "what" "value" "unit"
for n in 5 10; do
	up "$n"
	wait_alive "$n"
	propagation "$n"
	if [ "$n" = 10 ]; then
		read -r max mean < <(rss_kib 10)
		row "gossipd RSS at 10 nodes, max" "$((max / 1024)).$(((max % 1024) * 10 / 1024))" MiB
		row "gossipd RSS at 10 nodes, mean" "$((mean / 1024)).$(((mean % 1024) * 10 / 1024))" MiB
	fi
	read -r first last < <(mts_detection "$n")
	row "mts: kill to first node reporting dead, $n nodes" "$first" ms
	row "mts: kill to all nodes reporting dead, $n nodes" "$last" ms
	read -r first last < <(serf_detection "$n")
	row "serf: kill to first member-failed, $n nodes" "$first" ms
	row "serf: kill to all member-failed, $n nodes" "$last" ms
done
MTS_CLUSTER_CONF="" catchup "$CATCHUP"

#!/usr/bin/env bash
# statestore.sh: mts-statestore benchmarks — durable put rate vs raw synced RocksDB batches, anti-entropy cost, RSS and start time at 100k keys.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
printf '[node]\nrundir = %s/run\nstatedir = %s/state\n' "$T_DIR" "$T_DIR" >"$T_DIR/mts.conf"
SS=$BUILD/tests/sstool
RUNS=${RUNS:-3}
SECS=${SECS:-3}

start() { # NAME
	"$BIN/mts-statestore" -c "$T_DIR/mts.conf" -r "$T_DIR/$1/run" -s "$T_DIR/$1/state" 2>>"$T_DIR/$1.log" &
	T_PIDS+=($!)
	eval "PID_$1=$!"
	wait_for 20 "$SS" "$T_DIR/$1/run/statestore/statestore.sock" root >/dev/null
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "durable puts, 100-byte values, $RUNS interleaved runs of ${SECS}s (median)"
start api
S=$T_DIR/api/run/statestore/statestore.sock
for r in $(seq 1 "$RUNS"); do
	"$BUILD/tests/storebench" "$T_DIR/raw1.$r" "$SECS" 1 1 100 >>"$T_DIR/raw1"
	"$BUILD/tests/storebench" "$T_DIR/raw16.$r" "$SECS" 16 1 100 >>"$T_DIR/raw16"
	"$BUILD/tests/storebench" "$T_DIR/rawb16.$r" "$SECS" 1 16 100 >>"$T_DIR/rawb16"
	"$SS" "$S" load 1 "$SECS" 100 >>"$T_DIR/api1"
	"$SS" "$S" load 16 "$SECS" 100 >>"$T_DIR/api16"
	"$BUILD/tests/ipcbench" "$T_DIR" "$SECS" 1 100 mts >>"$T_DIR/echo1"
	"$BUILD/tests/ipcbench" "$T_DIR" "$SECS" 16 100 mts >>"$T_DIR/echo16"
	"$BUILD/tests/ipcbench" "$T_DIR" "$SECS" 16 100 nng >>"$T_DIR/nng16"
done
raw1=$(median <"$T_DIR/raw1")
raw16=$(median <"$T_DIR/raw16")
rawb16=$(median <"$T_DIR/rawb16")
echo1=$(median <"$T_DIR/echo1")
echo16=$(median <"$T_DIR/echo16")
nng16=$(median <"$T_DIR/nng16")
printf '%-48s %10s %10s %10s\n' "" "puts/s" "p50 us" "p99 us"
printf '%-48s %10s\n' "raw RocksDB, 1 writer, synced batches of 1" "$raw1"
printf '%-48s %10s\n' "raw RocksDB, 16 writers, synced batches of 1" "$raw16"
printf '%-48s %10s\n' "raw RocksDB, 1 writer, synced batches of 16" "$rawb16"
printf '%-48s %10s\n' "IPC echo (mts REQ/REP), 1 client, no work" "$echo1"
printf '%-48s %10s\n' "IPC echo (mts REQ/REP), 16 clients, no work" "$echo16"
printf '%-48s %10s\n' "IPC echo (nng REQ + raw REP), 16 clients, no work" "$nng16"
for c in 1 16; do
	rate=$(awk '{print $1}' "$T_DIR/api$c" | median)
	p50=$(awk '{print $2}' "$T_DIR/api$c" | median)
	p99=$(awk '{print $3}' "$T_DIR/api$c" | median)
	printf '%-48s %10s %10s %10s\n' "API, $c client(s)" "$rate" "$p50" "$p99"
	eval "api$c=$rate"
done
awk -v a1="$api1" -v a="$api16" -v r1="$raw1" -v r16="$raw16" -v rb="$rawb16" -v e16="$echo16" -v e1="$echo1" -v n16="$nng16" 'BEGIN {
	printf "API / raw at 1 client:                         %.2f\n", a1 / r1;
	printf "API / raw at 16 clients (16 writers, batch 1): %.2f\n", a / r16;
	printf "API at 16 clients / raw batches of 16:         %.2f\n", a / rb;
	printf "IPC ceiling: echo / raw at 16 clients:         %.2f\n", e16 / r16;
	printf "API / echo at 16 clients:                      %.2f\n", a / e16;
	printf "mts IPC / nng IPC, echo at 16 clients:       %.2f\n", e16 / n16 }'

echo
echo "anti-entropy: two replicas of 100,000 keys (200-byte values) differing in 100 keys"
start a
start b
A=$T_DIR/a/run/statestore/statestore.sock
B=$T_DIR/b/run/statestore/statestore.sock
"$SS" "$A" fill 100000 200 1000000
"$SS" "$B" fill 100000 200 1000000
for i in $(seq 1 100); do "$SS" "$B" put "k/$(printf '%09d' $((RANDOM * 3 % 100000)))" changed-value-$i; done
read -r _ pages _ pbytes _ cand _ pulled _ rbytes < <("$SS" "$A" diff "$B")
read -r _ nrec npages live < <("$SS" "$B" root)
full=$(du -sb "$T_DIR/b/state" | awk '{print $1}')
logical=$((nrec * (9 + 26 + 200 + 8)))
echo "pages fetched $pages ($pbytes bytes), candidate keys $cand, records pulled $pulled ($rbytes bytes)"
awk -v p="$pbytes" -v r="$rbytes" -v f="$logical" -v n="$npages" 'BEGIN {
	printf "bytes to find and fetch the difference: %d = %.3f%% of the state (%d bytes of keys+records; %d pages)\n", p + r, 100 * (p + r) / f, f, n }'

echo
echo "statestore holding 100,000 keys"
rss=$(awk '/VmRSS/ {print $2}' /proc/"$PID_b"/status)
echo "RSS: $((rss / 1024)) MiB ($rss kB)"
kill "$PID_b"; wait "$PID_b" 2>/dev/null
for r in $(seq 1 "$RUNS"); do
	t0=$(date +%s%N)
	start b
	echo $((($(date +%s%N) - t0) / 1000000)) >>"$T_DIR/startms"
	kill "$PID_b"; wait "$PID_b" 2>/dev/null
done
echo "start to serving (MST rebuild included), median of $RUNS: $(median <"$T_DIR/startms") ms"
grep -h "loaded 100" "$T_DIR/b.log" | tail -1 | sed 's/.*: /rebuild as logged: /'

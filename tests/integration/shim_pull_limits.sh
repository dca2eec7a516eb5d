#!/usr/bin/env bash
# shim_pull_limits.sh: what an image pull may cost — a registry trickling 1 byte/s fails at the low-speed limit and frees the image lock, a slow one at the pull deadline, a layer longer than declared stops at its size, a size mismatch is reported as one, and declared sizes over pull_max_blob or the store's free space are refused before a byte is fetched (shim_registry.py misbehaves on purpose).
. "$(dirname "$0")/lib_shim.bash"
shim_setup "pull_low_speed_limit = 1K
pull_low_speed_time = 2s
pull_timeout = 8s
pull_max_blob = 64M"
shim_start
STORE=$STATE/shim/images
base=$("$TOP/scripts/freeport" 1 "$T_DIR") || { fail "a free port"; t_done; }
REG=127.0.0.1:$((base + 1))
python3 "$TOP/tests/integration/shim_registry.py" $((base + 1)) "$T_DIR/busybox-oci" "$T_DIR/reg.log" 2>"$T_DIR/reg.err" &
T_PIDS+=($!)
check "registry answers on $REG" wait_for 20 curl -sf -o /dev/null "http://$REG/v2/"
layer=$(python3 -c '
import json,sys,os
src=sys.argv[1]
idx=json.load(open(os.path.join(src,"index.json")))
m=json.load(open(os.path.join(src,"blobs/sha256",idx["manifests"][0]["digest"][7:])))
print(m["layers"][0]["digest"], m["layers"][0]["size"])' "$T_DIR/busybox-oci")
size=${layer#* }
layer=${layer% *}

pull() { # REPO: sets out, rc, took
	local t0=$SECONDS
	out=$(timeout 120 "$CTL" image pull --insecure "$REG/$1:latest" 2>&1)
	rc=$?
	took=$((SECONDS - t0))
	echo "  $1 ($took s): $out"
}
nothing_staged() { test -z "$(ls "$STORE/tmp")"; }

pull good
check "a well-behaved registry pulls" test $rc -eq 0
$CTL image rm "$REG/good:latest" >/dev/null

# 1 byte/s: below 1 KiB/s for 2 s fails, and the lock is free again.
pull trickle
check "a trickling registry fails" test $rc -ne 0
check "at the low-speed limit, in $took s (limit 2 s)" test "$took" -le 8
check "the error says it was too slow" grep -qi 'too slow' <<<"$out"
check "nothing half-stored" nothing_staged
pull good
check "the image lock is free again: the next pull works" test $rc -eq 0
$CTL image rm "$REG/good:latest" >/dev/null

# 8 KiB/s passes the low-speed limit; the deadline (8 s) stops it.
pull slow
check "a registry too slow for the deadline fails" test $rc -ne 0
check "at the deadline, in $took s (8 s)" test "$took" -ge 7 -a "$took" -le 20
check "the error names the deadline" grep -q 'pull deadline passed' <<<"$out"
check "and an import works right after" bash -c "$CTL image import $T_DIR/busybox-oci >/dev/null"
$CTL image rm busybox:latest >/dev/null

pull oversend
check "a layer longer than declared is refused" test $rc -ne 0
check "as a size mismatch ($size declared)" grep -q "$layer: size mismatch (the registry sent more than the declared $size bytes)" <<<"$out"
check "nothing half-stored" nothing_staged

pull short
check "a layer shorter than declared is refused" test $rc -ne 0
check "as a size mismatch, not a digest mismatch" grep -q "$layer: size mismatch ($size bytes, $((size + 1)) declared)" <<<"$out"

before=$(grep -c "GET /v2/huge/blobs/$layer" "$T_DIR/reg.log")
pull huge
check "a layer declared 2^40 bytes is refused" test $rc -ne 0
check "over pull_max_blob" grep -q "$layer: declared size 1099511627776 bytes is over the limit of 67108864" <<<"$out"
check "before it was requested" test "$(grep -c "GET /v2/huge/blobs/$layer" "$T_DIR/reg.log")" -eq "$before"
check "the store holds nothing" test -z "$(find "$STORE/blobs/sha256" "$STORE/layers" "$STORE/images" "$STORE/tmp" -mindepth 1)"

# With a limit above it, the store's free space refuses it.
shim_kill9
shim_config "pull_max_blob = 2000G"
shim_start
pull huge
check "a layer larger than the free space is refused" grep -q "$layer: declared size 1099511627776 bytes, but the image store has [0-9]* bytes free" <<<"$out"
check "before it was requested" test "$(grep -c "GET /v2/huge/blobs/$layer" "$T_DIR/reg.log")" -eq "$before"
"$TOP/scripts/freeport" --release "$T_DIR"
t_done

#!/usr/bin/env bash
# shim_peer.sh: images shared between nodes — an image imported on node 1 only runs on nodes 2 and 3, which fetch it through gossipd (i/<node> records, chunked relay, every blob verified by digest); a test hook corrupts a chunk, which is refused by its digest and fetched again; a holder whose shim is down is left for another; shared blobs are linked, not fetched; a docker-save import travels too; pull --from-peers; an image nobody has gives a clear error.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"

# every node spoils the first chunk it serves to another node; a holder
# that does not answer is left after 2 s
export MTS_CLUSTER_SHIM_CONF='test_corrupt_chunks = 1\npeer_chunk_timeout = 2s'
g_up_shims 3
id1=$(g_id 1)
slog() { echo "$MTS_CLUSTER_DIR/n$1/log/shim.log"; }
image_id() { # I NAME: the image's id on node I
	g_ctl "$1" -o json image ls |
		python3 -c 'import json,sys; print(next((i["id"] for i in json.load(sys.stdin) if i["name"]==sys.argv[1]),""))' "$2"
}
task_state() { # I TASK
	g_ctl "$1" -o json task inspect "$2" 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null
}

"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
g_ctl 1 image import "$T_DIR/busybox-oci" >/dev/null
want=$(image_id 1 busybox:latest)
check "node 1 holds busybox:latest" test -n "$want"
check "nodes 2 and 3 do not" test -z "$(image_id 2 busybox:latest)$(image_id 3 busybox:latest)"
held() { g_ctl "$1" state get "i/$id1" 2>/dev/null | grep -q .; }
check "node 1's i/<node> record reaches node 2" wait_for 15 held 2
check "... and node 3" wait_for 15 held 3

# node 2 runs a task of it: fetched from node 1, whose first chunk is
# corrupted by the hook
t0=$SECONDS
out=$(g_ctl 2 task run --name on2 busybox -- sh -c 'echo up; exec sleep 1000' 2>&1)
check "a task of it runs on node 2 ($((SECONDS - t0)) s): $out" test "$(task_state 2 on2)" = running
check "node 2 now holds the same image" test "$(image_id 2 busybox:latest)" = "$want"
check "node 1 corrupted a chunk it served (the hook)" grep -q 'test_corrupt_chunks: flipped a byte' "$(slog 1)"
check "node 2 refused it by its digest" grep -q 'digest mismatch' "$(slog 2)"
check "... and fetched it again" grep -q "retrying from node $id1" "$(slog 2)"
check "the task prints" wait_for 10 sh -c "'$BIN/mtsctl' -r '$(g_run 2)' logs on2 | grep -qx up"

# node 3 too, while node 1's shim is down: node 1 still says it holds the
# image and is alive, but does not answer; node 3 goes on with node 2
id2=$(g_id 2)
g_ctl 1 agent stop shim >/dev/null
shim_down() { g_ctl 1 agent ls | grep -q '^shim .*down'; }
check "node 1's shim is down" wait_for 10 shim_down
t0=$SECONDS
out=$(g_ctl 3 task run --name on3 busybox -- sleep 1000 2>&1)
check "a task of it runs on node 3 ($((SECONDS - t0)) s): $out" test "$(task_state 3 on3)" = running
check "node 3 holds the same image" test "$(image_id 3 busybox:latest)" = "$want"
check "node 3 left node 1 for node 2" grep -q "from node $id1: .*; retrying from node $id2" "$(slog 3)"
g_ctl 1 agent start shim >/dev/null
shim_up() { g_ctl 1 image ls >/dev/null 2>&1; }
check "node 1's shim is back" wait_for 15 shim_up

# a docker-save archive imported on node 1 travels too (mts writes its
# OCI manifest at import)
"$TOP/scripts/mkimage" --format docker-archive --ref dock/bb:2 "$T_DIR/bb-docker.tar" >/dev/null
g_ctl 1 image import "$T_DIR/bb-docker.tar" >/dev/null
dwant=$(image_id 1 dock/bb:2)
held_dock() { g_ctl 2 state get "i/$id1" | grep -q 'dock/bb:2'; }
check "node 2 learns node 1 holds dock/bb:2" wait_for 15 held_dock
out=$(g_ctl 2 task run --name dock2 dock/bb:2 -- sleep 1000 2>&1)
check "a docker-save image runs on node 2: $out" test "$(task_state 2 dock2)" = running
check "... the same image" test "$(image_id 2 dock/bb:2)" = "$dwant"

# an image whose blobs node 2 has already (another name for busybox):
# linked from its store, not fetched
g_ctl 1 image import --name bb2:1 "$T_DIR/busybox-oci" >/dev/null
held_bb2() { g_ctl 2 state get "i/$id1" | grep -q 'bb2:1'; }
check "node 2 learns node 1 holds bb2:1" wait_for 15 held_bb2
out=$(g_ctl 2 task run --name bb2 bb2:1 -- sleep 1000 2>&1)
check "bb2:1 runs on node 2: $out" test "$(task_state 2 bb2)" = running
check "... its blobs taken from node 2's own store (0 bytes fetched)" \
	grep -q 'image bb2:1: 0 bytes from' "$(slog 2)"

# pull --from-peers, explicitly
g_ctl 3 task rm -f on3 >/dev/null
gone() { ! g_ctl 3 task inspect on3 >/dev/null 2>&1; }
check "node 3's task of it is gone" wait_for 15 gone
g_ctl 3 image rm busybox:latest >/dev/null
check "node 3 removed it" test -z "$(image_id 3 busybox:latest)"
# a plain pull asks the registry (Docker Hub: unreachable here), then the
# peers
out=$(g_ctl 3 image pull busybox:latest 2>&1)
check "image pull on node 3 falls back to the peers: $out" test -n "$(image_id 3 busybox:latest)"
g_ctl 3 image rm busybox:latest >/dev/null
out=$(g_ctl 3 image pull --from-peers busybox:latest 2>&1)
check "image pull --from-peers on node 3: $out" test "$(image_id 3 busybox:latest)" = "$want"

# an image nobody has: a clear error, nothing runs
out=$(g_ctl 3 task run --name nosuch nosuch/img:1 -- true 2>&1)
rc=$?
check "a task of an image nobody has is refused (rc $rc)" test $rc -ne 0
check "... saying so: $out" grep -q 'image nosuch/img:1: not in any registry and no peer has it' <<<"$out"
out=$(g_ctl 3 image pull --from-peers nosuch/img:1 2>&1)
check "pull --from-peers of it says so too: $out" grep -q "image nosuch/img:1: no peer has it" <<<"$out"
t_done

#!/usr/bin/env bash
# image_peer.sh: image transfer between two loopback nodes — `mtsctl image pull --from-peers` of a ~50 MB image (busybox plus a 48 MiB layer of random bytes) imported on node 1, fetched by node 2 through gossipd in 1 MiB chunks, every blob verified; MB/s (median of 3) at [shim] peer_fetch_rate 0 (no limit) and at its default 64M.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/gossip_lib.sh"
N=${IMAGE_PEER_BENCH_N:-3}
MIB=${IMAGE_PEER_BENCH_MIB:-48}
if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
	echo "skipped (needs root and runc)"
	exit 0
fi
t_tmpdir
trap 'g_down; t_cleanup' EXIT

"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
# a second, uncompressed layer of random bytes on top of busybox
python3 - "$T_DIR/busybox-oci" "$MIB" <<'PY' || exit 1
import hashlib, io, json, os, sys, tarfile
lay, mib = sys.argv[1], int(sys.argv[2])
blobs = os.path.join(lay, "blobs", "sha256")
def put(b):
    d = hashlib.sha256(b).hexdigest()
    open(os.path.join(blobs, d), "wb").write(b)
    return "sha256:" + d, len(b)
def get(d):
    return open(os.path.join(blobs, d[7:]), "rb").read()
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    data = os.urandom(mib << 20)
    ti = tarfile.TarInfo("big"); ti.size = len(data); ti.mode = 0o644
    t.addfile(ti, io.BytesIO(data))
ldig, lsize = put(buf.getvalue())
idx = json.load(open(os.path.join(lay, "index.json")))
man = json.loads(get(idx["manifests"][0]["digest"]))
cfg = json.loads(get(man["config"]["digest"]))
cfg["rootfs"]["diff_ids"].append(ldig)
cdig, csize = put(json.dumps(cfg).encode())
man["config"].update(digest=cdig, size=csize)
man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ldig, "size": lsize})
mdig, msize = put(json.dumps(man).encode())
idx["manifests"][0].update(digest=mdig, size=msize)
json.dump(idx, open(os.path.join(lay, "index.json"), "w"))
PY
size=$(du -sb "$T_DIR/busybox-oci/blobs" | cut -f1)

# run RATE: N fetches by node 2 on a fresh 2-node cluster; prints MB/s
run() {
	local i t0 t1 f=$T_DIR/times
	export MTS_CLUSTER_SHIM=1 MTS_CLUSTER_SHIM_CONF="peer_fetch_rate = $1"
	g_down
	rm -rf "$T_DIR/cluster"
	g_up 2 || { echo "cluster did not start"; return 1; }
	wait_for 10 g_all_alive 2 1 2 || return 1
	g_ctl 1 image import "$T_DIR/busybox-oci" >/dev/null || return 1
	wait_for 15 sh -c "'$BIN/mtsctl' -r '$(g_run 2)' state get i/$(g_id 1) | grep -q busybox" || return 1
	: >"$f"
	for i in $(seq 1 "$N"); do
		t0=$(date +%s%N)
		g_ctl 2 image pull --from-peers busybox:latest >/dev/null || return 1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$f"
		g_ctl 2 image rm busybox:latest >/dev/null || return 1
	done
	ms=$(sort -n "$f" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	printf '%-40s %8s %10s\n' "peer_fetch_rate = $1" "$ms" \
	    "$(awk -v b="$size" -v ms="$ms" 'BEGIN {printf "%.1f", b / 1e6 / (ms / 1000)}')"
}
printf 'image of %d bytes, median of %d fetches\n' "$size" "$N"
printf '%-40s %8s %10s\n' "node 2 pulls --from-peers node 1" "ms" "MB/s"
run 0
run 64M

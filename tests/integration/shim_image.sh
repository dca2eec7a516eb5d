#!/usr/bin/env bash
# shim_image.sh: image import — OCI layout dir and archive, docker-save archive, whiteouts (overlay and copy modes), and bad input refused with clear errors and nothing stored or written outside the store.
. "$(dirname "$0")/lib_shim.bash"
shim_setup
shim_start
MK="python3 $TOP/tests/integration/shim_images.py"
STORE=$STATE/shim/images

store_listing() { (cd "$STORE" && find . -path ./tmp -prune -o -print | sort); }

"$TOP/scripts/mkimage" --format oci-archive "$T_DIR/bb-oci.tar" >/dev/null
"$TOP/scripts/mkimage" --format docker-archive --ref dock:1 "$T_DIR/bb-docker.tar" >/dev/null
gzip -k "$T_DIR/bb-oci.tar"

check "import an OCI layout directory" bash -c "$CTL image import $T_DIR/busybox-oci | grep -q '^busybox:latest '"
check "import an OCI layout tar under another name" bash -c "$CTL image import --name other:tag $T_DIR/bb-oci.tar | grep -q '^other:tag '"
check "import a gzipped OCI layout tar" bash -c "$CTL image import --name gz:1 $T_DIR/bb-oci.tar.gz | grep -q '^gz:1 '"
check "import a docker-save archive" bash -c "$CTL image import $T_DIR/bb-docker.tar | grep -q '^dock:1 '"
check "four names" test "$($CTL image ls | tail -n +2 | wc -l)" -eq 4
check "one layer stored for all four (content-addressed)" test "$(ls "$STORE/layers" | wc -l)" -eq 1
$CTL task run --name fromdock dock:1 -- echo docker-image-runs >/dev/null
check "a task runs from the docker-save image" wait_for 10 bash -c "$CTL logs fromdock | grep -qx docker-image-runs"
$CTL task rm fromdock
$CTL image rm other:tag
$CTL image rm gz:1
check "shared layer kept while referenced" test "$(ls "$STORE/layers" | wc -l)" -eq 1

# Whiteouts: a later layer deletes a file, hides a directory's old content
# (opaque) and deletes a top-level file.
$MK whiteout "$T_DIR/wh" "$T_DIR/busybox-oci"
check "import a layered image with whiteouts" bash -c "$CTL image import $T_DIR/wh | grep -q '^whiteout:latest '"
wh_check() { # MODE
	$CTL task run --name "wh$1" whiteout -- sh -c 'ls /a; echo --; ls /opq; echo --; ls / | grep -E "^(top|added)$"; cat /link' >/dev/null
	wait_for 10 task_is "wh$1" state exited
	local got
	got=$($CTL logs "wh$1" | tr '\n' ' ')
	check "whiteouts honoured ($1): $got" test "$got" = "keep -- new -- added keep "
	check "rootfs mode is $1" task_is "wh$1" rootfs "$1"
	$CTL task rm "wh$1"
}
wh_check overlay

# A layout whose index points at an image index (arm64 + amd64).
$MK multiarch "$T_DIR/multi" "$T_DIR/busybox-oci"
check "nested index resolved to linux/amd64" bash -c "$CTL image import --name multi:1 $T_DIR/multi | grep -q '^multi:1 '"
$CTL task run --name arch multi:1 -- uname -m >/dev/null
check "and its image runs" wait_for 10 bash -c "$CTL logs arch | grep -qx x86_64"
$CTL task rm arch
$CTL image rm multi:1

# Bad input: refused with a clear error, the store unchanged, nothing
# written outside it.
before=$(store_listing)
refused() { # NAME PATH PATTERN
	local out
	out=$(timeout 60 "$CTL" image import "$2" 2>&1)
	local rc=$?
	echo "  $1: $out"
	check "$1 refused" test $rc -ne 0
	check "$1 error says: $3" grep -qiE "$3" <<<"$out"
	check "$1 leaves the store unchanged" test "$(store_listing)" = "$before"
	check "$1 leaves no staging dir" test -z "$(ls "$STORE/tmp")"
}
head -c 300000 "$T_DIR/bb-oci.tar" >"$T_DIR/trunc.tar"
refused "truncated archive" "$T_DIR/trunc.tar" "truncated"
head -c 10000 "$T_DIR/bb-oci.tar.gz" >"$T_DIR/trunc.tar.gz"
refused "truncated gzip archive" "$T_DIR/trunc.tar.gz" "truncated|corrupt|error"
echo "not an archive at all" >"$T_DIR/junk.tar"
refused "a file that is no archive" "$T_DIR/junk.tar" "archive|format"
$MK missing "$T_DIR/missing" "$T_DIR/busybox-oci"
refused "manifest with a missing blob" "$T_DIR/missing" "missing from the image"
$MK corrupt "$T_DIR/corrupt" "$T_DIR/busybox-oci"
refused "blob not matching its digest" "$T_DIR/corrupt" "digest mismatch"
$MK diffid "$T_DIR/diffid" "$T_DIR/busybox-oci"
refused "layer not matching its diff id" "$T_DIR/diffid" "hashes to"
canary=mts-escape-$$
$MK traversal "$T_DIR/trav" "$T_DIR/busybox-oci" "$canary"
refused "layer entry ../../$canary" "$T_DIR/trav" "unsafe path.*\.\./\.\./$canary"
$MK absolute "$T_DIR/abs" "$T_DIR/busybox-oci" "/tmp/$canary"
refused "absolute layer entry" "$T_DIR/abs" "unsafe path"
mkdir -p "$T_DIR/outside"
$MK symlink "$T_DIR/sym" "$T_DIR/busybox-oci" "$T_DIR/outside"
refused "write through a symlink" "$T_DIR/sym" "symlink"
$MK hardlink "$T_DIR/hl" "$T_DIR/busybox-oci" "$canary"
refused "hard link out of the layer" "$T_DIR/hl" "unsafe hard link"
check "nothing written through the symlink" test -z "$(ls "$T_DIR/outside")"
check "no escaped file anywhere near" test -z "$(find / -xdev -maxdepth 6 -name "$canary" 2>/dev/null | head -1)"
# The same traversal inside a tar of the layout.
tar -C "$T_DIR/trav" -cf "$T_DIR/trav.tar" .
refused "traversal inside an archive" "$T_DIR/trav.tar" "unsafe path"
# An archive whose own entries escape.
python3 -c '
import tarfile,io,sys
with tarfile.open(sys.argv[1],"w") as t:
    ti=tarfile.TarInfo("../../'"$canary"'"); ti.size=1; t.addfile(ti,io.BytesIO(b"x"))' "$T_DIR/evil.tar"
refused "archive entry ../../$canary" "$T_DIR/evil.tar" "unsafe path"
check "still no escaped file" test -z "$(find / -xdev -maxdepth 6 -name "$canary" 2>/dev/null | head -1)"
$CTL image import "$T_DIR/nope" 2>"$T_DIR/err"
check "missing path named in the error" grep -q "$T_DIR/nope" "$T_DIR/err"

# Files of an image directory are opened without following any link and
# only when regular: a blob linked to a host file was hashed (here the
# link's target even holds the right bytes), a FIFO blocked the helper.
layer_hex=$(python3 -c '
import json,sys,os
src=sys.argv[1]
idx=json.load(open(os.path.join(src,"index.json")))
m=json.load(open(os.path.join(src,"blobs/sha256",idx["manifests"][0]["digest"][7:])))
print(m["layers"][0]["digest"][7:])' "$T_DIR/busybox-oci")
cp -a "$T_DIR/busybox-oci" "$T_DIR/lnk"
mv "$T_DIR/lnk/blobs/sha256/$layer_hex" "$T_DIR/outside/blob"
ln -s "$T_DIR/outside/blob" "$T_DIR/lnk/blobs/sha256/$layer_hex"
refused "a blob that is a symlink" "$T_DIR/lnk" "blobs/sha256/$layer_hex: a symbolic link"
cp -a "$T_DIR/busybox-oci" "$T_DIR/fifo"
rm "$T_DIR/fifo/blobs/sha256/$layer_hex"
mkfifo "$T_DIR/fifo/blobs/sha256/$layer_hex"
t0=$SECONDS
refused "a blob that is a FIFO" "$T_DIR/fifo" "blobs/sha256/$layer_hex: not a regular file"
check "the FIFO did not block the import ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 10
cp -a "$T_DIR/busybox-oci" "$T_DIR/lnkdir"
mv "$T_DIR/lnkdir/blobs" "$T_DIR/outside/blobs"
ln -s "$T_DIR/outside/blobs" "$T_DIR/lnkdir/blobs"
refused "a blobs directory that is a symlink" "$T_DIR/lnkdir" "a symbolic link"
cp -a "$T_DIR/busybox-oci" "$T_DIR/lnkidx"
ln -sf /etc/passwd "$T_DIR/lnkidx/index.json"
refused "an index.json that is a symlink" "$T_DIR/lnkidx" "index.json: a symbolic link"
tar -C "$T_DIR/lnk" -cf "$T_DIR/lnk.tar" .
refused "a symlinked blob inside an archive" "$T_DIR/lnk.tar" "blobs/sha256/$layer_hex: a symbolic link"
mkdir "$T_DIR/dock"
tar -C "$T_DIR/dock" -xf "$T_DIR/bb-docker.tar"
dlayer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["Layers"][0])' "$T_DIR/dock/manifest.json")
mv "$T_DIR/dock/$dlayer" "$T_DIR/outside/dlayer"
ln -s "$T_DIR/outside/dlayer" "$T_DIR/dock/$dlayer"
refused "a docker-save layer that is a symlink" "$T_DIR/dock" "$dlayer: a symbolic link"
mkfifo "$T_DIR/import.fifo"
t0=$SECONDS
refused "a FIFO as the import path" "$T_DIR/import.fifo" "neither a directory nor a regular file"
check "refused at once ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 10
rm -rf "$T_DIR/outside/"*

# Copy mode (no overlayfs): same result.
shim_kill9
shim_config "rootfs = copy"
shim_start
wh_check copy

# Restarting the shim with an interrupted import left behind cleans it.
mkdir -p "$STORE/tmp/stage.crash/layer-x" "$STORE/layers/$(printf 'f%.0s' $(seq 64))"
shim_kill9
shim_start
check "interrupted import cleaned at start" test -z "$(ls "$STORE/tmp")"
check "unreferenced layer collected at start" test ! -e "$STORE/layers/$(printf 'f%.0s' $(seq 64))"
t_done

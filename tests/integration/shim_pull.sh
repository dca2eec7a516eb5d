#!/usr/bin/env bash
# shim_pull.sh: image pull from a real registry (Debian's docker-registry on loopback, busybox pushed with skopeo) — by tag, by digest, through an index, and a corrupted blob refused with nothing stored.
. "$(dirname "$0")/lib_shim.bash"
for c in docker-registry skopeo curl; do
	command -v "$c" >/dev/null || skip_all "no $c"
done
shim_setup
shim_start
STORE=$STATE/shim/images

# free_port: a free port claimed for this test (scripts/freeport), so
# concurrent runs do not pick the same one between the check and the bind.
free_port() {
	local b
	b=$("$TOP/scripts/freeport" 1 "$T_DIR") || return 1
	echo $((b + 1))
}
PORT=$(free_port) || { fail "a free port for the registry"; t_done; }
REG=127.0.0.1:$PORT
cat >"$T_DIR/registry.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $T_DIR/registry
  delete:
    enabled: true
http:
  addr: $REG
EOF
docker-registry serve "$T_DIR/registry.yml" >"$T_DIR/registry.log" 2>&1 &
T_PIDS+=($!)
check "registry answers on $REG" wait_for 20 curl -sf -o /dev/null "http://$REG/v2/"

skopeo copy -q --dest-tls-verify=false "oci:$T_DIR/busybox-oci:latest" "docker://$REG/busybox:latest" 2>"$T_DIR/skopeo.err"
check "skopeo pushed busybox" test $? -eq 0 || cat "$T_DIR/skopeo.err"
python3 "$TOP/tests/integration/shim_images.py" multiarch "$T_DIR/multi" "$T_DIR/busybox-oci"
skopeo copy -q --all --dest-tls-verify=false "oci:$T_DIR/multi:multi" "docker://$REG/multi:latest" 2>>"$T_DIR/skopeo.err"
check "skopeo pushed a two-platform index" test $? -eq 0

out=$($CTL image pull --insecure "$REG/busybox:latest" 2>&1)
echo "  $out"
check "pull by tag" grep -q "^$REG/busybox:latest sha256:" <<<"$out"
$CTL task run --name pulled "$REG/busybox:latest" -- sh -c 'echo from-the-registry' >/dev/null
check "a task runs from the pulled image" wait_for 10 bash -c "$CTL logs pulled | grep -qx from-the-registry"
wait_for 10 task_is pulled state exited # its log line comes before its exit
$CTL task rm pulled
digest=$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$REG/busybox:latest")
check "pull by digest" bash -c "$CTL image pull --insecure $REG/busybox@$digest | grep -q sha256:"
out=$($CTL image pull --insecure "$REG/multi:latest" 2>&1)
echo "  $out"
check "pull through an index picks linux/amd64" grep -q "^$REG/multi:latest sha256:" <<<"$out"
$CTL task run --name multi "$REG/multi:latest" -- uname -m >/dev/null
check "the amd64 image runs" wait_for 10 bash -c "$CTL logs multi | grep -qx x86_64"
wait_for 10 task_is multi state exited # its log line comes before its exit
$CTL task rm multi
$CTL image pull --insecure "$REG/nothere:latest" >/dev/null 2>"$T_DIR/err"
check "missing repository named in the error" grep -q 'nothere.*HTTP 404' "$T_DIR/err"
$CTL image pull "$REG/busybox:latest" >/dev/null 2>"$T_DIR/err"
check "HTTPS to a plain-HTTP registry fails clearly" grep -qiE 'ssl|tls|https' "$T_DIR/err"
$CTL image pull --insecure 'Bad Ref' >/dev/null 2>"$T_DIR/err"
check "bad reference refused" grep -q 'invalid image reference' "$T_DIR/err"

# A registry that wants a bearer token: 401 with a Bearer challenge, a
# token from the realm, then the pull.
TPORT=$(free_port)
RPORT=$(free_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_DIR/tok.key" -out "$T_DIR/tok.crt" \
	-days 2 -subj /CN=mts-test-token >/dev/null 2>&1
python3 "$TOP/tests/integration/shim_token.py" "$TPORT" "$T_DIR/tok.key" "$T_DIR/tok.crt" mts-test-issuer \
	2>"$T_DIR/token.log" &
T_PIDS+=($!)
check "token server answers" wait_for 20 curl -sf -o /dev/null "http://127.0.0.1:$TPORT/token?service=probe"
cat >"$T_DIR/registry2.yml" <<EOF2
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $T_DIR/registry2
http:
  addr: 127.0.0.1:$RPORT
auth:
  token:
    realm: http://127.0.0.1:$TPORT/token
    service: mts-test-registry
    issuer: mts-test-issuer
    rootcertbundle: $T_DIR/tok.crt
EOF2
docker-registry serve "$T_DIR/registry2.yml" >"$T_DIR/registry2.log" 2>&1 &
T_PIDS+=($!)
REG2=127.0.0.1:$RPORT
check "token registry answers 401 with a Bearer challenge" wait_for 20 bash -c \
	"curl -si http://$REG2/v2/ | grep -qi '^www-authenticate: Bearer realm=\"http://127.0.0.1:$TPORT/token\"'"
skopeo copy -q --dest-tls-verify=false "oci:$T_DIR/busybox-oci:latest" "docker://$REG2/private/busybox:1" 2>"$T_DIR/skopeo2.err"
check "skopeo pushed with a token" test $? -eq 0 || cat "$T_DIR/skopeo2.err" "$T_DIR/registry2.log"
before=$(grep -c 'GET /token?service=mts' "$T_DIR/token.log")
out=$($CTL image pull --insecure "$REG2/private/busybox:1" 2>&1)
echo "  $out"
check "pull through bearer-token auth" grep -q "^$REG2/private/busybox:1 sha256:" <<<"$out"
check "the shim asked the realm for a pull token" test "$(grep -c 'GET /token?.*scope=repository%3Aprivate%2Fbusybox%3Apull' "$T_DIR/token.log")" -gt 0
check "and only once more than skopeo did (token reused)" test "$(grep -c 'GET /token?service=mts' "$T_DIR/token.log")" -eq $((before + 1))

# Corrupt the layer blob in the registry's storage (same size, other
# bytes): the pull must refuse it and store nothing.
for n in $($CTL -o json image ls | python3 -c 'import json,sys; print(" ".join(i["name"] for i in json.load(sys.stdin)))'); do
	$CTL image rm "$n"
done
check "store empty before the corrupt pull" test -z "$(find "$STORE/blobs/sha256" "$STORE/layers" "$STORE/images" -mindepth 1)"
layer=$(python3 -c '
import json,sys,os
src=sys.argv[1]
idx=json.load(open(os.path.join(src,"index.json")))
m=json.load(open(os.path.join(src,"blobs/sha256",idx["manifests"][0]["digest"][7:])))
print(m["layers"][0]["digest"][7:])' "$T_DIR/busybox-oci")
data="$T_DIR/registry/docker/registry/v2/blobs/sha256/${layer:0:2}/$layer/data"
check "layer blob found in the registry's storage" test -f "$data"
printf 'CORRUPTED' | dd of="$data" bs=1 seek=1000 conv=notrunc status=none
out=$($CTL image pull --insecure "$REG/busybox:latest" 2>&1)
rc=$?
echo "  $out"
check "corrupted blob refused" test $rc -ne 0
check "error names the digest mismatch" grep -q "sha256:$layer: digest mismatch" <<<"$out"
check "nothing half-stored" test -z "$(find "$STORE/blobs/sha256" "$STORE/layers" "$STORE/images" "$STORE/tmp" -mindepth 1)"
t_done

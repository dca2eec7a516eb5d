#!/usr/bin/env bash
# service_update.sh: `mtsctl service update|rollback|promote` on the service records, against the test agent's in-memory statestore: a version per spec change with the previous kept, --env-add and --replicas (a scale keeps the spec digest), nothing written when nothing changes, --pause/--resume and promote in the record's control, rollback and its undo, usage errors and exit codes; `service inspect` with the u/ update status and `service ps` telling tasks of the current spec from old ones.
. "$(dirname "$0")/../lib.sh"
t_testagent
cat >stack.yml <<'YML'
services:
  web:
    image: nginx:1.25
    environment: {A: "1"}
    deploy: {replicas: 3}
  api:
    image: api:1
    x-mts:
      update: {canary: 1}
  agent:
    image: agent:1
    deploy: {mode: global}
YML
# ins SVC EXPR: EXPR over service inspect SVC
ins() { $CTL service inspect "$1" | jf "$2"; }
hlc() { $CTL -o json state get "s/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["hlc"])'; }

check "deploy" bash -c "$CTL deploy -c stack.yml --stack shop --detach >/dev/null"
digest1=$($CTL service inspect shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec_digest"])')
check "inspect prints the spec digest" test ${#digest1} -eq 32

out=$($CTL service update shop_web --image nginx:1.26)
check "update --image says what it wrote" test "$out" = "shop_web: updated (version 2)"
check "... version 2, the image, version 1's spec kept as previous" ins shop_web 'j["version"] == 2 and j["spec"]["image"] == "nginx:1.26" and j["previous"]["image"] == "nginx:1.25" and j["previous_version"] == 1 and not j["rollback"]'
check "... a new spec digest" ins shop_web "j['spec_digest'] != '$digest1'"
digest2=$($CTL service inspect shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec_digest"])')

check "update --env-add twice" bash -c "$CTL service update shop_web --env-add B=2 --env-add A=3 >/dev/null"
check "... sets B and replaces A" ins shop_web 'sorted((e["key"], e["value"]) for e in j["spec"]["environment"]) == [("A", "3"), ("B", "2")] and j["version"] == 3'
check "update --replicas" bash -c "$CTL service update shop_web --replicas 5 >/dev/null"
check "... version 4 with 5 replicas" ins shop_web 'j["version"] == 4 and j["spec"]["replicas"] == 5'
d3=$($CTL service inspect shop_web | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["spec_digest"])')
$CTL service update shop_web --env-add C=1 >/dev/null
$CTL service update shop_web --replicas 2 >/dev/null
check "a scale keeps the spec digest (it replaces no task)" ins shop_web "j['spec_digest'] == '$($CTL service inspect shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec_digest"])')' and j['spec_digest'] != '$d3'"
v=$($CTL -o json service inspect shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
h=$(hlc shop_web)
out=$($CTL service update shop_web --replicas 2)
check "an update that changes nothing says so" test "$out" = "shop_web: unchanged (version $v)"
check "... and writes nothing" test "$(hlc shop_web)" = "$h"

check "update --pause" bash -c "$CTL service update shop_web --pause >/dev/null"
check "... the control says paused, the version stays" ins shop_web "j['control']['paused'] and j['version'] == $v"
check "update --resume" bash -c "$CTL service update shop_web --resume >/dev/null"
check "... unpaused, one resume counted" ins shop_web "not j['control']['paused'] and j['control']['resumes'] == 1 and j['version'] == $v"
$CTL service update shop_web --pause >/dev/null
$CTL service update shop_web --image nginx:1.27 >/dev/null
check "a new version ends the pause, keeping the resumes" ins shop_web "not j['control']['paused'] and j['control']['resumes'] == 1 and j['version'] == $((v + 1))"

out=$($CTL service rollback shop_web)
check "rollback says what it wrote" test "$out" = "shop_web: rolled back to version $v's spec (version $((v + 2)))"
check "... the previous spec back, marked, the current one kept" ins shop_web "j['spec']['image'] == 'nginx:1.26' and j['previous']['image'] == 'nginx:1.27' and j['rollback'] and j['previous_version'] == $((v + 1))"
check "a second rollback undoes it" bash -c "$CTL service rollback shop_web >/dev/null"
check "... nginx:1.27 again" ins shop_web "j['spec']['image'] == 'nginx:1.27' and j['version'] == $((v + 3))"
$CTL service rollback shop_api 2>err
check "rollback with no previous spec exits 1" test $? -eq 1
check "... saying why" grep -q 'shop_api: no previous spec to roll back to' err

$CTL service promote shop_web 2>err
check "promote of a service with no canaries exits 1" test $? -eq 1
check "... saying why" grep -q 'no canaries' err
$CTL -o json service promote shop_api >out
check "promote -o json" jf 'j == {"service": "shop_api", "version": 1, "change": "canaries promoted"}' <out
check "... the control holds the promoted version" ins shop_api 'j["control"]["promoted"] == 1 and j["version"] == 1'

$CTL service update shop_agent --replicas 3 2>err
check "--replicas of a global service exits 1" test $? -eq 1
for bad in "" "--pause --resume" "--pause --image x" "--replicas many" "--replicas -1" "--env-add NOEQ" "--env-add =v" "--image" "--bogus"; do
	# shellcheck disable=SC2086
	$CTL service update shop_web $bad >/dev/null 2>&1
	check "update shop_web $bad: usage error (2)" test $? -eq 2
done
$CTL service update shop_web shop_api --pause >/dev/null 2>&1
check "update of two services: usage error" test $? -eq 2
$CTL service update nope --image x 2>/dev/null
check "update of an unknown service exits 5" test $? -eq 5
$CTL service rollback nope 2>/dev/null
check "rollback of an unknown service exits 5" test $? -eq 5
check "update --help is a man page" bash -c "$CTL service update --help | grep -q 'EXIT STATUS'"

# --- ps and inspect with tasks and an update status -----------------------------
# pb FIELDS...: a protobuf message from (number, type, value) triples
cat >pb.py <<'PY'
import sys
def varint(n):
    b = b""
    while True:
        x = n & 0x7f; n >>= 7
        b += bytes([x | (0x80 if n else 0)])
        if not n: return b
def f(num, v):
    if isinstance(v, int): return varint(num << 3) + varint(v)
    if isinstance(v, str): v = v.encode()
    return varint(num << 3 | 2) + varint(len(v)) + v
def task(tid, version, digest_hex):
    spec = f(2, "nginx") + f(18, "shop_web") + f(21, version) + f(22, bytes.fromhex(digest_hex))
    return f(1, tid) + f(2, "running") + f(6, "healthy") + f(9, 1700000000000) + f(13, spec) + f(15, "running")
def status():
    return (f(1, 1) + f(2, 9) + f(3, "updating") + f(4, 2) + f(5, 3) + f(6, 2) +
            f(8, 1764592205000) + f(17, "batch 2 of 3: 1 tasks") + f(18, bytes(16)) + f(19, 8))
w = sys.stdout.buffer
if sys.argv[1] == "task": w.write(task(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
else: w.write(status())
PY
dig=$($CTL service inspect shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec_digest"])')
node=0123456789abcdef0123456789abcdef
python3 pb.py task tnew $((v + 3)) "$dig" | $CTL state put "t/$node/tnew" - >/dev/null
python3 pb.py task told 2 "$digest2" | $CTL state put "t/$node/told" - >/dev/null
$CTL -o json service ps shop_web >out
check "ps -o json: the version and whether the task runs the record's spec" jf "sorted((r['task'], r['version'], r['current']) for r in j) == [('tnew', $((v + 3)), True), ('told', 2, False)]" <out
$CTL service ps shop_web >out
check "ps: the VERSION column" grep -q '^TASK *VERSION' out
check "... old tasks marked" grep -Eq '^told +2 \(old\) ' out
check "... current ones not" grep -Eq "^tnew +$((v + 3)) " out
python3 pb.py status | $CTL state put u/shop_web - >/dev/null
check "inspect: the update status (state, batch n/m, started, message)" ins shop_web '(lambda u: u["state"] == "updating" and u["progress"] == "2/3" and u["started"] == "2025-12-01T12:30:05Z" and u["message"] == "batch 2 of 3: 1 tasks" and u["version"] == 9 and u["from_version"] == 8)(j["update_status"])'
check "inspect of a service with no update: no update_status" ins shop_api '"update_status" not in j'
$CTL -o json service ls >out
check "service ls: the update's state and batch" jf '{r["name"]: r["update"] for r in j} == {"shop_web": "updating 2/3", "shop_api": "", "shop_agent": ""}' <out
check "... an UPDATE column" bash -c "$CTL service ls | grep -q 'OWNER *UPDATE'"
t_done

#!/usr/bin/env bash
# mtsctl_json.sh: `mtsctl -o json` on every command of mtsctl's command table (a 3-node cluster with shims): each prints JSON that parses (logs: one object per line) or, for a command with no JSON form, refuses -o json; node ls's self flag, UTF-8 and non-UTF-8 values, config print, logs --tail 0.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v runc >/dev/null; then
	skip_all "needs root and runc"
fi
t_tmpdir
trap 'g_down; t_cleanup' EXIT
chmod o+x "$T_DIR" # the sandboxed agents run as their own uids
export MTS_CLUSTER_DIR=$T_DIR/cluster MTS_CLUSTER_SHIM=1
unset MTS_CLUSTER_PORT
CTL=$BIN/mtsctl

# Every command the table has, as "group" or "group cmd" (mtsctl --help).
mapfile -t COMMANDS < <("$CTL" --help | awk '/^COMMANDS/ {on = 1; next}
	on && /^$/ {exit} on {print substr($0, 5, 24)}' | sed 's/ *$//')
declare -A COVERED=()

J() { local n=$1; shift; "$CTL" -r "$(g_run "$n")" -o json "$@"; }

# jcheck CMD NODE ARGS...: `mtsctl -o json ARGS` on NODE exits 0 and prints
# one JSON value (kept in $T_DIR/out.json); CMD is the table's name.
jcheck() {
	local cmd=$1 node=$2
	shift 2
	COVERED[$cmd]=1
	if ! J "$node" "$@" >"$T_DIR/out.json" 2>"$T_DIR/err"; then
		fail "$cmd: -o json $* exits 0 ($(head -c 300 "$T_DIR/err"))"
		return 1
	fi
	if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T_DIR/out.json" 2>/dev/null; then
		pass "$cmd: -o json prints JSON"
	else
		fail "$cmd: -o json prints JSON (got: $(head -c 300 "$T_DIR/out.json"))"
		return 1
	fi
}
# jq_ PY: a Python expression over the last output, j (for check)
jq_() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$T_DIR/out.json" "$@"; }

for i in 1 2 3; do
	"$GOSSIP_CLUSTER" start "$i" >>"$T_DIR/up.log" 2>&1 || { fail "node $i starts"; cat "$T_DIR/up.log"; t_done; }
done

# --- cluster init / join ---
jcheck "cluster init" 1 cluster init --advertise "127.0.0.1:$(g_port 1)"
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$T_DIR/out.json")
jcheck "cluster join" 2 cluster join "$token"
check "cluster join: cluster_id and members" jq_ 'len(j["cluster_id"]) == 32 and j["members"] >= 1'
g_ctl 3 cluster join "$token" >/dev/null
check "3 alive members" wait_for 15 g_all_alive 3 1 2 3

# --- read-only commands ---
jcheck "version" 1 version
jcheck "agent ls" 1 agent ls
jcheck "cluster stats" 1 cluster stats
jcheck "cluster token" 1 cluster token show
check "cluster token show: the token" jq_ 'j["token"] == sys.argv[3] and j["rotated"] is False' "$token"
jcheck "node ls" 1 node ls
check "node ls: ids are bare (no self marker)" jq_ 'all(len(n["id"]) == 32 and " " not in n["id"] for n in j)'
check "node ls: exactly one member has self: true" jq_ 'sum(1 for n in j if n["self"] is True) == 1'
check "node ls: the table still marks this node with *" \
	eval 'g_ctl 1 node ls | grep -q "^[0-9a-f]\{32\} \* "'
jcheck "node inspect" 1 node inspect n1
check "node inspect: capacity, free and the lists" jq_ 'j["capacity"]["cpu_millis"] >= 1000 and j["free"]["memory"] > 0 and j["task_list"] == [] and j["lease_list"] == []'
jcheck "node inspect" 1 node inspect n2
check "node inspect n2 (through the relay): node 2's id" jq_ 'j["node"] == sys.argv[3]' "$(g_id 2)"
jcheck "node label" 1 node label add n2 zone=a
check "node label add: the nl/ key and value" jq_ 'j["key"] == "nl/" + sys.argv[3] + "/zone" and j["value"] == "a"' "$(g_id 2)"
jcheck "node label" 1 node label rm n2 zone
check "node label rm: removed" jq_ 'j["removed"] is True'
jcheck "node drain" 1 node drain n2
check "node drain: node 2 drained, was active" jq_ 'j["node"] == sys.argv[3] and j["availability"] == "drain" and j["previous"] == "active"' "$(g_id 2)"
jcheck "node pause" 1 node pause n2
check "node pause: was drain" jq_ 'j["availability"] == "pause" and j["previous"] == "drain"'
jcheck "node activate" 1 node activate n2
check "node activate: active again" jq_ 'j["availability"] == "active" and j["previous"] == "pause"'
jcheck "node inspect" 1 node inspect n2
check "node inspect: the availability" jq_ 'j["availability"] == "active"'

# --- stack config: the loaded stack as JSON ---
printf 'services:\n  web:\n    image: nginx\n    deploy: {replicas: 2}\n' >"$T_DIR/stack.yml"
jcheck "stack config" 1 stack config -c "$T_DIR/stack.yml" --stack demo
check "stack config: the stack's name, service and replicas" jq_ 'j["name"] == "demo" and j["services"]["web"]["deploy"]["replicas"] == 2'
printf '  db:\n    image: postgres\n' >>"$T_DIR/stack.yml"
jcheck "deploy" 1 deploy -c "$T_DIR/stack.yml" --stack demo --detach
check "deploy: one object per service" jq_ 'sorted(r["service"] for r in j) == ["demo_db", "demo_web"] and all(r["version"] == 1 for r in j)'
jcheck "plan" 1 plan -c "$T_DIR/stack.yml" --stack demo
check "plan: unchanged after the deploy" jq_ 'all(r["change"] == "unchanged" for r in j)'
jcheck "service ls" 1 service ls
check "service ls: name, mode, running, desired, image, owner" jq_ 'all(set(["name", "mode", "running", "desired", "image", "owner"]) <= set(r) for r in j) and len(j) == 2'
jcheck "service ps" 1 service ps demo_web
jcheck "service inspect" 1 service inspect demo_web
jcheck "service scale" 1 service scale demo_web=3
jcheck "service update" 1 service update demo_web --image nginx:2
check "service update: service, version, change" jq_ 'j["service"] == "demo_web" and j["version"] == 3 and j["change"] == "updated"'
jcheck "service rollback" 1 service rollback demo_web
check "service rollback: a new version" jq_ 'j["version"] == 4'
jcheck "service rebalance" 1 service rebalance demo_db
check "service rebalance: service, version, moves, change" jq_ 'j["service"] == "demo_db" and {"version", "moves", "change"} <= set(j)'
J 1 service promote demo_web >/dev/null 2>&1
check "service promote of a service with no canaries exits 1" test $? -eq 1
COVERED["service promote"]=1 # its JSON: tests/integration/service_update.sh
jcheck "stack ls" 1 stack ls
jcheck "stack services" 1 stack services demo
jcheck "network ls" 1 network ls
check "network ls: demo_default, scope stack demo, its 2 services" jq_ 'any(n["name"] == "demo_default" and n["scope"] == "stack demo" and n["nservices"] == 2 for n in j)'
jcheck "network inspect" 1 network inspect demo_default
check "network inspect: name, services, tasks" jq_ 'j["name"] == "demo_default" and sorted(j["services"]) == ["demo_db", "demo_web"] and isinstance(j["tasks"], list)'
jcheck "stack ps" 1 stack ps demo
jcheck "service rm" 1 service rm demo_db
jcheck "stack rm" 1 stack rm demo
COVERED[events]=1 # JSON lines, as logs: each must parse (events.sh has more)
J 1 events >"$T_DIR/ev.json" 2>"$T_DIR/err"
check "events: -o json exits 0" test $? -eq 0
check "events: -o json prints JSON lines" python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T_DIR/ev.json"

# --- state: values are bytes ---
jcheck "state put" 1 state put "json/clé" "café"
jcheck "state get" 1 state get "json/clé"
check "state get: a UTF-8 key and value come as text" jq_ 'j["key"] == "json/clé" and j["value"] == "café"'
printf '\377\376ok' | J 1 state put json/bin - >/dev/null
J 1 state get json/bin >"$T_DIR/out.json"
check "state get: non-UTF-8 bytes come as value_base64" jq_ '"value" not in j and j["value_base64"] == "//5vaw=="'
J 1 state get -v json/bin >"$T_DIR/out.json"
check "state get -v: the value alone, as value_base64" jq_ 'j == {"value_base64": "//5vaw=="}'
check "state get (table): UTF-8 shown as is" eval 'g_ctl 1 state get "json/clé" | grep -q "^value: *café$"'
check "state get (table): other bytes as \\xNN" eval 'g_ctl 1 state get json/bin | grep -q "^value: *\\\\xff\\\\xfeok$"'
jcheck "state ls" 1 state ls json/
check "state ls: both records" jq_ 'sorted(r["key"] for r in j) == ["json/bin", "json/clé"]'
jcheck "state root" 1 state root
jcheck "state rm" 1 state rm json/bin
check "state rm: the tombstone" jq_ 'j["tombstone"] is True'

# --- config ---
conf=$MTS_CLUSTER_DIR/n1/mts.conf
jcheck "config check" 1 config check "$conf"
jcheck "config print" 1 config print "$conf"
check "config print: sections of key/value strings" \
	jq_ 'j["node"]["name"] == "n1" and j["gossipd"]["node_key"] in ("yes", "true") and all(isinstance(v, str) for s in j.values() for v in s.values())'
jcheck "config reload" 1 config reload

# --- images, tasks, logs ---
"$TOP/scripts/mkimage" "$T_DIR/busybox-oci" >/dev/null
jcheck "image import" 1 image import "$T_DIR/busybox-oci"
jcheck "image ls" 1 image ls
jcheck "task run" 1 task run --name printer busybox -- sh -c \
	'echo line 1; printf "caf\303\251\n"; printf "\377\n"; printf "no newline"
	 while [ ! -e /tmp/go ]; do sleep 0.05; done; echo after; sleep 0.3'
printed() { g_ctl 1 logs printer | grep -q 'no newline'; }
check "the task prints" wait_for 10 printed
jcheck "task ls" 1 task ls
jcheck "task inspect" 1 task inspect printer
COVERED[logs]=1
J 1 logs printer >"$T_DIR/logs.json"
check "logs: one JSON object per line" python3 - "$T_DIR/logs.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want = [("line", "line 1", 0), ("line", "café", 7), ("line_base64", "/w==", 13),
        ("line", "no newline", 15)]
got = [(k, r[k], r["offset"]) for r in rows for k in ("line", "line_base64") if k in r]
assert got == want, got
assert all(r["task"] == "printer" for r in rows)
assert rows[-1].get("partial") is True and "partial" not in rows[0]
PY
check "logs --tail 0: prints nothing" test -z "$(g_ctl 1 logs --tail 0 printer)"
has_record() { g_ctl 2 state get "t/$(g_id 1)/printer" >/dev/null; }
wait_for 10 has_record
check "logs --tail 0 from another node: prints nothing" test -z "$(g_ctl 2 logs --tail 0 printer)"
check "logs --tail 1: the last line" test "$(g_ctl 1 logs --tail 1 printer)" = "no newline"
g_ctl 1 logs --tail 0 -f printer >"$T_DIR/follow" 2>&1 &
fpid=$!
sleep 0.5
g_ctl 1 exec printer -- touch /tmp/go
check "logs --tail 0 -f: ends with the task" wait_for 10 eval '! kill -0 $fpid 2>/dev/null'
check "logs --tail 0 -f: only what came after" test "$(cat "$T_DIR/follow")" = "after"
COVERED[exec]=1
J 1 exec printer -- true >/dev/null 2>"$T_DIR/err"
rc=$?
check "exec: -o json refused (exit 2) rather than ignored" [ $rc = 2 ]
check "... saying why" grep -q "exec: no -o json" "$T_DIR/err"
jcheck "task stop" 1 task stop printer
jcheck "task rm" 1 task rm printer
check "task rm: the removed task" jq_ 'j == {"removed": "printer"}'

# image pull from a registry on loopback, then image rm
if command -v docker-registry >/dev/null && command -v skopeo >/dev/null; then
	rport=$(("$("$TOP/scripts/freeport" 1 "$T_DIR")" + 1))
	mkdir -p "$T_DIR/registry"
	printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
		"$T_DIR/registry" "$rport" >"$T_DIR/registry.yml"
	docker-registry serve "$T_DIR/registry.yml" >"$T_DIR/registry.log" 2>&1 &
	T_PIDS+=($!)
	wait_for 20 curl -sf -o /dev/null "http://127.0.0.1:$rport/v2/"
	skopeo copy -q --dest-tls-verify=false "oci:$T_DIR/busybox-oci:latest" \
		"docker://127.0.0.1:$rport/bb:1" 2>"$T_DIR/skopeo.err"
	jcheck "image pull" 1 image pull --insecure "127.0.0.1:$rport/bb:1"
	jcheck "image rm" 1 image rm "127.0.0.1:$rport/bb:1"
else
	COVERED["image pull"]=1
	skip "image pull: -o json (no docker-registry or skopeo)"
	jcheck "image rm" 1 image rm busybox:latest
fi

# --- agents, then membership changes ---
jcheck "agent restart" 3 agent restart statestore
jcheck "agent stop" 3 agent stop shim
jcheck "agent start" 3 agent start shim
jcheck "cluster token" 1 cluster token rotate
check "cluster token rotate: a new token" jq_ 'j["token"] != sys.argv[3] and j["rotated"] is True' "$token"
"$GOSSIP_CLUSTER" stop 3
jcheck "node rm" 1 node rm n3
check "node rm: the removed id" jq_ 'len(j["removed"]) == 32'
jcheck "cluster leave" 2 cluster leave

# mts-netd needs a network namespace per node: its commands' JSON is
# checked by tests/netns/netd_overlay.sh.
for c in "overlay status" "overlay attach" "overlay detach"; do COVERED[$c]=1; done

# --- every command of the table was checked ---
check "mtsctl --help lists the commands" [ ${#COMMANDS[@]} -ge 30 ]
for c in "${COMMANDS[@]}"; do
	[ -n "${COVERED[$c]:-}" ] || fail "'$c' has no JSON check here (add one for a new command)"
done
t_done

#!/usr/bin/env bash
# mtsctl_newcomer.sh: what a newcomer met using mtsctl on a real cluster, against the test agent's in-memory statestore — a scale to the count a service has writes nothing, stack services|ps of an unknown stack exit 5 as stack rm does, an empty stack gives "services": {} and a deploy that says it deploys nothing, the events table lines up with long task ids, a missing agent's socket on a running node names the agent, a command's manual has one EXIT STATUS.
. "$(dirname "$0")/../lib.sh"
t_testagent

mkdir my-app2
printf 'services:\n  web-1:\n    image: busybox:latest\n    deploy: {replicas: 0}\n' >my-app2/one.yml
check "deploy of a one-service stack with 0 replicas (a relative path)" \
	$CTL deploy -c my-app2/one.yml --detach
check "... named after the file's directory" $CTL service inspect my-app2_web-1

# scale to the count it has: nothing written (the previous spec, kept for
# rollback, stays); to 0 and back: a version each
check "scale to 3" $CTL service scale my-app2_web-1=3
out=$($CTL service scale my-app2_web-1=3)
check "scale to 3 again: exit 0, says so" bash -c "[ $? = 0 ] && grep -q 'already 3 replicas' <<<'$out'"
check "... and writes no version (still 2, previous has 0 replicas)" bash -c \
	"$CTL service inspect my-app2_web-1 | jf 'j[\"version\"] == 2 and j[\"previous\"][\"replicas\"] == 0'"
check "-o json of it: change none" bash -c \
	"$CTL -o json service scale my-app2_web-1=3 | jf 'j == [{\"service\": \"my-app2_web-1\", \"replicas\": 3, \"version\": 2, \"change\": \"none\"}]'"
check "scale to 0 and back to 3: two versions" bash -c \
	"$CTL service scale my-app2_web-1=0 >/dev/null && $CTL service scale my-app2_web-1=3 >/dev/null && $CTL service inspect my-app2_web-1 | jf 'j[\"version\"] == 4 and j[\"spec\"][\"replicas\"] == 3'"

# tasks that never reached a shim (reconciled's record of the intent: no
# spec digest) are told old or current by their version, not all "old"
# put_task ID VERSION: a failed t/ record of my-app2_web-1 without a digest
put_task() {
	"$TOP/tests/integration/taskrec.py" id="$1" state=failed \
	    "error=image busybox:latest: not in any registry" \
	    service=my-app2_web-1 version="$2" desired=running slot=1 |
		$CTL state put "t/00000000000000000000000000000001/$1" - >/dev/null
}
put_task my-app2_web-1.1.cafe0004 4
put_task my-app2_web-1.1.cafe0003 3
$CTL -o json service ps my-app2_web-1 >ps.json
check "service ps: a digest-less task of the record's version is current" jf \
	'[(t["version_label"], t["current"]) for t in sorted(j, key=lambda t: t["task"])] == [("3 (old)", False), ("4", True)]' <ps.json
check "... and the table says 4, not 4 (old)" bash -c \
	"$CTL service ps my-app2_web-1 | grep -q '^my-app2_web-1.1.cafe0004  *4  '"
$CTL state rm t/00000000000000000000000000000001/my-app2_web-1.1.cafe0004 >/dev/null
$CTL state rm t/00000000000000000000000000000001/my-app2_web-1.1.cafe0003 >/dev/null

# an unknown stack, as stack rm says
for c in services ps rm; do
	$CTL stack $c nope >out 2>err
	check "stack $c nope: exit 5" test $? -eq 5
	check "... 'nope: no such stack'" grep -q 'nope: no such stack' err
done
check "stack services of a stack that exists" bash -c "$CTL stack services my-app2 | grep -q '^my-app2_web-1 '"
check "stack ps of a stack that exists" $CTL stack ps my-app2

# an empty stack
: >empty.yml
check "stack config -o json of an empty file: services {}" bash -c \
	"$CTL -o json stack config -c empty.yml | jf 'j[\"services\"] == {}'"
check "... and the table form parses back as a map" bash -c \
	"$CTL stack config -c empty.yml | grep -qx 'services: {}'"
$CTL deploy -c empty.yml --detach >out 2>err
check "deploy of it: exit 0" test $? -eq 0
check "... saying it deploys nothing" grep -q 'the files name no service: nothing to deploy' err

# the events table lines up however long a task id is
mkdir -p "$RUN/reconciled"
ms=$(($(date +%s) * 1000))
for t in demo_agent.fea013a9.8cd9e43d w.1; do
	printf '{"time":"2026-12-01T15:56:59.621Z","ms":%s,"node":"n1","agent":"reconciled","type":"task.placed","service":"demo_agent","task":"%s","on":"n1","message":"slot 0"}\n' "$ms" "$t"
done >"$RUN/reconciled/events.jsonl"
$CTL events >out
check "events: a header and 2 rows" test "$(wc -l <out)" -eq 3
check "... each column starts where its header does" python3 -c '
import sys
l = open("out").read().splitlines()
h = l[0]
cols = [h.index(w) for w in ("AGENT", "TYPE", "SERVICE", "TASK", "ON", "MESSAGE")]
for r in l[1:]:
    for c in cols:
        if r[c - 2:c] != "  " or r[c] == " ":
            sys.exit(1)'

# a node that runs (init's socket is there) without the agent asked for
mkdir -p "$RUN/init"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$RUN/init/admin.sock"
$CTL overlay status >out 2>err
check "overlay status without mts-netd: exit 3" test $? -eq 3
check "... 'mts-netd is not running on this node'" grep -q 'mts-netd is not running on this node' err
rm -f "$RUN/init/admin.sock"
$CTL overlay status >out 2>err
check "without mts-init either: asks whether mts-init runs" grep -q 'is mts-init running' err

# every manual has one EXIT STATUS section, and its synopsis the -t option
mapfile -t COMMANDS < <("$CTL" --help | awk '/^COMMANDS/ {on = 1; next}
	on && /^$/ {exit} on {print substr($0, 5, 24)}' | sed 's/ *$//')
bad=
for c in "${COMMANDS[@]}"; do
	read -ra words <<<"$c"
	"$CTL" "${words[@]}" --help >out 2>&1
	[ "$(grep -c '^EXIT STATUS$' out)" = 1 ] || bad="$bad [$c: EXIT STATUS]"
	grep -A1 '^SYNOPSIS' out | grep -q -- '\[-t MS\]' || bad="$bad [$c: -t]"
done
check "every manual: one EXIT STATUS, -t in the synopsis${bad:+:$bad}" test -z "$bad"
# scripts/cluster --help: the usage on stdout, exit 0 (it was exit 2, on
# stderr, as for a mistake); a mistake still exits 2
"$TOP/scripts/cluster" --help >out 2>err
check "scripts/cluster --help: exit 0, usage on stdout" bash -c "[ $? = 0 ] && grep -q '^usage: scripts/cluster up N' out && ! [ -s err ]"
"$TOP/scripts/cluster" bogus >out 2>err
check "scripts/cluster bogus: exit 2, usage on stderr" bash -c "[ $? = 2 ] && grep -q '^usage:' err"
t_done

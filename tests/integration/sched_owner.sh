#!/usr/bin/env bash
# sched_owner.sh: ownership by rendezvous hashing on a 3-node cluster — while membership is stable every node names the same owner for each service, sampled over seconds; SIGKILL of a service's owner moves ownership to the same surviving node on both others, and every service gets back its 3 running replicas on the survivors, no more.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

svc='    image: busybox:latest
    command: ["sleep", "3600"]
    deploy: {replicas: 3}'
s_stack own "services:
  a:
$svc
  b:
$svc
  c:
$svc
  d:
$svc"
SVCS="o_a o_b o_c o_d"
check "deploy of 4 services of 3 replicas exits 0" g_ctl 2 deploy -c own.yml --stack o --wait 60

# owners NODE: "svc=owner ..." as NODE's service ls shows them
owners() { s_ls "$1" | jp '" ".join("%s=%s" % (s["name"], s["owner"][:12]) for s in sorted(j, key=lambda s: s["name"]))'; }
ref=$(owners 1)
same=1
for k in 1 2 3 4 5 6; do
	for i in 1 2 3; do [ "$(owners "$i")" = "$ref" ] || same=0; done
	sleep 0.5
done
check "every node names the same owners, sampled 6 times over 3 s ($ref)" test $same = 1
check "... and every service has one" bash -c "! grep -q '=\( \|$\)' <<<'$ref '"

# the victim: the owner of the first service not owned by node 1 (node 1
# stays up to keep the cluster's directory tools simple)
victim= S=
for s in $SVCS; do
	o=$(s_name_of "$(s_owner 1 "$s")")
	[ "$o" != n1 ] && { victim=${o#n}; S=$s; break; }
done
if [ -z "$victim" ]; then
	victim=2 S=o_a # every service owned by node 1: kill a non-owner instead
	echo "    node 1 owns all 4 services; killing node 2 (not an owner)"
fi
survivors=$(seq 1 3 | grep -vx "$victim" | tr '\n' ' ')
vid=$(g_id "$victim")
for s in $SVCS; do
	check "$s runs one replica on node $victim before the kill" \
		bash -c "[[ ' $(s_per_node 1 "$s") ' == *' n$victim=1 '* ]]"
done
echo "    killing node $victim, owner of $S"
"$GOSSIP_CLUSTER" kill "$victim" >/dev/null
dead_on() { [ "$(g_state_of "$1" "$vid")" = dead ]; }
for i in $survivors; do
	check "node $i sees node $victim dead" wait_for 30 dead_on "$i"
done
new_owner() { o=$(s_owner "$1" "$S"); [ -n "$o" ] && [ "$o" != "$vid" ]; }
for i in $survivors; do
	check "node $i names a new owner for $S" wait_for 10 new_owner "$i"
done
set -- $survivors
check "both survivors name the same new owner" test "$(s_owner "$1" "$S")" = "$(s_owner "$2" "$S")"

# alive_count I SVC: running tasks of SVC on the survivors, in node I's view
alive_count() {
	s_ps "$1" "$2" | jp 'sum(1 for t in j if t["state"] == "running" and t["node"] != "'"$vid"'")'
}
all_back() {
	local i s
	for i in $survivors; do
		for s in $SVCS; do [ "$(alive_count "$i" "$s")" = 3 ] || return 1; done
	done
}
check "every service has 3 running on the survivors again" wait_for 40 all_back
sleep 3
check "... and 3 s later still exactly 3 each" all_back
on_shims=0
for i in $survivors; do
	c=$(g_ctl "$i" -o json task ls | jp 'sum(1 for t in j if t.get("service", "").startswith("o_") and t["state"] == "running")')
	on_shims=$((on_shims + c))
done
check "the survivors' shims run 12 containers of the stack ($on_shims)" test "$on_shims" = 12
t_done

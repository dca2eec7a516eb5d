#!/usr/bin/env bash
# deploy_records.sh: `mtsctl deploy|plan|service|stack` on the service records, against the test agent's in-memory statestore: versions per change, the previous spec kept, plan's exit codes and changed fields, the creation HLC carried by every version, --prune, scale, rm, waiting that times out with no reconciler, JSON fields.
. "$(dirname "$0")/../lib.sh"
t_testagent
cat >stack.yml <<'YML'
services:
  web:
    image: nginx:1.25
    deploy: {replicas: 3}
  db:
    image: postgres:16
YML

$CTL plan -c stack.yml --stack shop >out 2>&1
check "plan of a new stack exits 2" test $? -eq 2
check "plan lists both services as new" test "$(grep -c ' new ' out)" -eq 2
check "plan wrote nothing" test -z "$($CTL state ls s/ | tail -n +2)"
check "deploy --detach exits 0" $CTL deploy -c stack.yml --stack shop --detach
check "deploy wrote s/shop_web and s/shop_db" test "$($CTL state ls s/ | tail -n +2 | wc -l)" -eq 2
check "a first deploy is version 1" bash -c "$CTL service inspect shop_web | jf 'j[\"version\"] == 1 and j[\"spec\"][\"replicas\"] == 3'"
$CTL plan -c stack.yml --stack shop >out 2>&1
check "plan of an unchanged stack exits 0" test $? -eq 0
hlc=$($CTL -o json state get s/shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["hlc"])')
$CTL deploy -c stack.yml --stack shop --detach >/dev/null
check "an unchanged deploy writes nothing" test "$($CTL -o json state get s/shop_web | python3 -c 'import json,sys; print(json.load(sys.stdin)["hlc"])')" = "$hlc"

sed -i 's/replicas: 3/replicas: 9/; s/nginx:1.25/nginx:1.26/' stack.yml
$CTL -o json plan -c stack.yml --stack shop >out
check "plan of a change exits 2" test $? -eq 2
check "plan names the changed fields" jf 'any(r["service"] == "shop_web" and r["change"] == "changed" and r["fields"] == "image, replicas" and r["replicas_now"] == 3 and r["replicas"] == 9 for r in j)' <out
$CTL deploy -c stack.yml --stack shop --detach >out
check "deploy says what it updated" grep -qx 'Updating service shop_web (version 2)' out
check "version 2 keeps version 1's spec as previous" bash -c "$CTL service inspect shop_web | jf 'j[\"version\"] == 2 and j[\"previous\"][\"image\"] == \"nginx:1.25\" and j[\"spec\"][\"image\"] == \"nginx:1.26\"'"
created() { $CTL service inspect shop_web | python3 -c 'import json,sys; print(int(json.load(sys.stdin).get("created_hlc", 0)))'; }
check "version 2 carries the first record's HLC as created_hlc ($hlc)" test "$(created)" = "$hlc"

# no reconciler here: waiting ends at --wait with exit 1
out=$($CTL deploy -c stack.yml --stack shop --wait 1 2>&1)
check "deploy that cannot converge exits 1 after --wait" test $? -eq 1
check "... printing the counts" grep -q '^shop_web: 0/9 running' <<<"$out"

printf 'services:\n  web:\n    image: nginx:1.26\n    deploy: {replicas: 9}\n' >stack.yml
$CTL deploy -c stack.yml --stack shop --detach >out
check "a service dropped from the file is kept without --prune" grep -q 'Keeping service shop_db' out
check "... and still there" $CTL service inspect shop_db
$CTL deploy -c stack.yml --stack shop --detach --prune >out
check "--prune removes it" grep -qx 'Removing service shop_db' out
$CTL service inspect shop_db >/dev/null 2>&1
check "... gone (exit 5)" test $? -eq 5

check "service scale" $CTL service scale shop_web=4
check "scale: a new version with 4 replicas" bash -c "$CTL service inspect shop_web | jf 'j[\"version\"] == 3 and j[\"spec\"][\"replicas\"] == 4'"
check "... still created at the first record's HLC" test "$(created)" = "$hlc"
$CTL service scale shop_web=many 2>/dev/null
check "scale with a bad count is a usage error" test $? -eq 2
$CTL service scale nope=1 2>/dev/null
check "scale of an unknown service exits 5" test $? -eq 5
check "service ls -o json has the fields" bash -c "$CTL -o json service ls | jf 'j[0][\"name\"] == \"shop_web\" and j[0][\"mode\"] == \"replicated\" and j[0][\"running\"] == 0 and j[0][\"desired\"] == 4 and j[0][\"image\"] == \"nginx:1.26\" and \"owner\" in j[0]'"
check "stack ls counts the stack's services" bash -c "$CTL -o json stack ls | jf 'j == [{\"name\": \"shop\", \"services\": 1}]'"

printf 'services:\n  web:\n    image: nginx\n    deploy: {replicas: -1}\n' >bad.yml
$CTL deploy -c bad.yml --stack shop --detach >out 2>&1
check "a broken file: exit 1" test $? -eq 1
check "... FILE:LINE:COLUMN" grep -q 'bad.yml:4:24: deploy.replicas' out
check "... nothing written" bash -c "$CTL service inspect shop_web | jf 'j[\"version\"] == 3'"
# published ports: one service of the cluster per port
printf 'services:\n  front:\n    image: nginx\n    ports: ["8080:80"]\n' >front.yml
check "a stack publishing 8080" $CTL deploy -c front.yml --stack shop --detach
printf 'services:\n  web:\n    image: nginx\n    ports: ["8081:80", "8080:8000"]\n' >other.yml
$CTL plan -c other.yml --stack other >out 2>&1
check "plan of another stack publishing 8080 too: exit 1" test $? -eq 1
check "... saying which port and which services" grep -q 'port 8080/tcp: published by shop_front and by other_web' out
$CTL deploy -c other.yml --stack other --detach >out 2>&1
check "deploy of it: exit 1, nothing written" bash -c "test $? -eq 1 && ! $CTL state ls s/ | grep -q other_web"
printf 'services:\n  a:\n    image: nginx\n    ports: ["9000:80"]\n  b:\n    image: nginx\n    ports: ["9000:81/tcp"]\n' >two.yml
$CTL plan -c two.yml --stack two >out 2>&1
check "two services of one file publishing 9000: exit 1" bash -c "test $? -eq 1 && grep -q 'port 9000/tcp: published by two_a and by two_b' out"
printf 'services:\n  a:\n    image: nginx\n    ports: ["9000:80/udp"]\n  b:\n    image: nginx\n    ports: ["9000:81/tcp"]\n' >two.yml
check "the same number over udp and tcp is no conflict" $CTL deploy -c two.yml --stack two --detach
$CTL stack rm two >/dev/null
check "redeploying the stack that holds 8080 is no conflict" $CTL deploy -c front.yml --stack shop --detach
check "stack rm" $CTL stack rm shop
check "stack rm removed its services" test -z "$($CTL -o json service ls | python3 -c 'import json,sys; print(json.load(sys.stdin) or "")')"
$CTL stack rm shop 2>/dev/null
check "stack rm of an unknown stack exits 5" test $? -eq 5
t_done

#!/usr/bin/env bash
# netd_ports.sh: two deploys that claim the same published port at once (two stacks, each deployed on one side of a partitioned pair, so that neither mtsctl's check sees the other) — after the heal every node's netd opens the port for the service created first only (all sampled connections on both nodes answered by it), the other's task keeps running and its port is reported conflicting (service inspect's endpoint.port_conflicts, service ls's line, a port.conflict event on both nodes naming the port and the holder); and the two services hash to the same VIP: the older keeps its VIP after the newer appears. On the old code the port went to the name that sorts first and the older service's VIP moved.
. "$(dirname "$0")/lib.sh"
for c in busybox wireguard-go runc python3; do
	command -v "$c" >/dev/null || skip_all "needs $c"
done
[ -c /dev/net/tun ] || skip_all "needs /dev/net/tun"

export MTS_CLUSTER_NETD=1 MTS_CLUSTER_SHIM=1 MTS_CLUSTER_NETD_CONF="seccomp_debug = yes"
ctl() { g_ctl "$@"; }
PORT=8080
# b_web and a17_web want the same first VIP candidate (BLAKE2b(name ‖ 0)
# mod 253, disc_vip_candidate); b is created first, a17 sorts first
OLD=b NEW=a17

n_up 2 || { cat "$T_DIR/up.log"; fail "2 nodes up in namespaces, each with netd"; t_done; }
pass "2 nodes up in namespaces, each with netd"
check "both alive" wait_for 15 g_all_alive 2 1 2
"$TOP/scripts/mkimage" "$T_DIR/bb" >/dev/null
for i in 1 2; do ctl "$i" image import "$T_DIR/bb" >/dev/null; done
digests() { local i; for i in 1 2; do [ "$(ctl "$i" state ls d/ | tail -n +2 | wc -l)" = 2 ] || return 1; done; }
check "both nodes hold the 2 d/ digests" wait_for 30 digests

for st in $OLD $NEW; do
	cat >"$T_DIR/$st.yml" <<YML
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    ports: ["$PORT:80"]
YML
done

# the race, forced: each side deploys without seeing the other's record
partition 1 2
sees_dead() { [ "$(g_state_of "$1" "$(g_id "$2")")" = dead ]; }
check "partitioned: node 1 holds node 2 dead" wait_for 30 sees_dead 1 2
check "partitioned: node 2 holds node 1 dead" wait_for 30 sees_dead 2 1
check "deploy $OLD (port $PORT) on node 2" sh -c "'$BIN/mtsctl' -r '$(g_run 2)' deploy -c '$T_DIR/$OLD.yml' --stack $OLD --wait 60 >'$T_DIR/deploy.log' 2>&1"
check "deploy $NEW (port $PORT) on node 1: its check cannot see ${OLD}_web" sh -c "'$BIN/mtsctl' -r '$(g_run 1)' deploy -c '$T_DIR/$NEW.yml' --stack $NEW --wait 60 >>'$T_DIR/deploy.log' 2>&1"

vip_of() { ctl "$1" service inspect "$2" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["endpoint"].get("vip",""))'; }
has_vip() { [ -n "$(vip_of "$1" "$2")" ]; }
check "node 2's netd gave ${OLD}_web a VIP" wait_for 10 has_vip 2 "${OLD}_web"
check "node 1's netd gave ${NEW}_web a VIP" wait_for 10 has_vip 1 "${NEW}_web"
vip_old=$(vip_of 2 "${OLD}_web")
vip_new0=$(vip_of 1 "${NEW}_web")
check "the two services want the same VIP ($vip_old, $vip_new0): the collision is forced" [ "$vip_old" = "$vip_new0" ]

heal
check "healed: both alive" wait_for 30 g_all_alive 2 1 2
both_svcs() { local i; for i in 1 2; do [ "$(ctl "$i" state ls s/ | tail -n +2 | wc -l)" = 2 ] || return 1; done; }
check "both nodes hold both service records" wait_for 30 both_svcs

# task SERVICE: "task node-index" of the service's running task, as node 1
# sees it
task_of() {
	ctl 1 -o json service ps "$1" | python3 -c '
import json,sys
ids={}
for i in (1,2):
    ids[open(sys.argv[1]+"/n%d/id" % i).read().strip()] = i
for t in json.load(sys.stdin):
    if t["state"] == "running":
        print(t["task"], ids.get(t["node"], 0)); break' "$MTS_CLUSTER_DIR"
}
one_each() { [ -n "$(task_of "${OLD}_web")" ] && [ -n "$(task_of "${NEW}_web")" ]; }
check "each service has its task running" wait_for 30 one_each
# a server in each task's namespace that says whose it is
SRV=()
trap 'kill "${SRV[@]}" 2>/dev/null; n_cleanup' EXIT
for s in "${OLD}_web" "${NEW}_web"; do
	read -r t i < <(task_of "$s")
	nsenter --net="$(g_run "$i")/netd/ns/$t" python3 -c '
import http.server,sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ("served-by-%s\n" % sys.argv[1]).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
http.server.HTTPServer(("0.0.0.0", 80), H).serve_forever()' "$s" &
	SRV+=($!)
done
# pub FROM TO: who answers when node FROM's namespace (outside the
# overlay) connects to node TO's address on the published port (from
# another node: a node's own connections to itself are not DNAT'ed)
pub() {
	n_in "$1" python3 -c '
import socket,sys
s=socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
d=b""
while True:
    c=s.recv(4096)
    if not c: break
    d+=c
print(d.decode().split("\r\n\r\n",1)[1].strip())' "$(n_addr "$2")" "$PORT" 2>/dev/null
}
old_answers() { [ "$(pub 2 1)" = "served-by-${OLD}_web" ] && [ "$(pub 1 2)" = "served-by-${OLD}_web" ]; }
check "port $PORT answers with ${OLD}_web (created first) on both nodes" wait_for 15 old_answers
for i in 1 2; do
	seen=$(for k in $(seq 1 10); do pub $((3 - i)) "$i"; done | sort | uniq -c)
	echo "node $i, 10 connections to $PORT: $(echo $seen)"
	check "node $i: all 10 connections answered by ${OLD}_web" [ "$(echo "$seen" | awk '{print $1, $2}')" = "10 served-by-${OLD}_web" ]
	n=$(n_in "$i" nft list table inet mts 2>/dev/null | grep -c "dport $PORT dnat")
	check "node $i: one DNAT rule for port $PORT in table inet mts ($n)" [ "$n" = 1 ]
done
conflicts() { ctl "$1" service inspect "$2" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["endpoint"]["port_conflicts"], sort_keys=True))'; }
want="[{\"held_by\": \"${OLD}_web\", \"port\": \"$PORT/tcp\"}]"
for i in 1 2; do
	check "node $i: service inspect ${NEW}_web: port $PORT/tcp held by ${OLD}_web" [ "$(conflicts "$i" "${NEW}_web")" = "$want" ]
	check "node $i: service inspect ${OLD}_web: no conflict" [ "$(conflicts "$i" "${OLD}_web")" = "[]" ]
	check "node $i: service ls says it" sh -c "'$BIN/mtsctl' -r '$(g_run "$i")' service ls | grep -qx '${NEW}_web: port $PORT/tcp is held by ${OLD}_web (created first): not opened for ${NEW}_web'"
	ev() { ctl "$1" -o json events 2>/dev/null | grep '"port.conflict"' | grep "\"${NEW}_web\"" | grep -q "port $PORT/tcp is held by ${OLD}_web"; }
	check "node $i: a port.conflict event names the port and ${OLD}_web" wait_for 5 ev "$i"
done
check "${NEW}_web's task still runs" [ -n "$(task_of "${NEW}_web")" ]

# the VIPs: the older keeps its own, the newer took another
for i in 1 2; do
	vo=$(vip_of "$i" "${OLD}_web")
	vn=$(vip_of "$i" "${NEW}_web")
	check "node $i: ${OLD}_web keeps its VIP $vip_old ($vo); ${NEW}_web has another ($vn)" \
		sh -c "[ '$vo' = '$vip_old' ] && [ -n '$vn' ] && [ '$vn' != '$vip_old' ]"
done
t_done

#!/usr/bin/env bash
# mtsctl_config_check.sh: `mtsctl config check FILE` runs `mts-init -n -c FILE` (the one next to mtsctl, else on PATH) instead of linking init's config builder — mtsctl links neither libseccomp nor libcap; a good file prints its agents, a bad one exits 1 with mts-init's FILE:LINE message.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib_init.bash"
t_tmpdir
c=$T_DIR/mts.conf
cat >"$c" <<EOC
[node]
rundir = $T_DIR/run
statedir = $T_DIR/state

[init]
admin_group = 0

[alpha]
executable = $TA
user = 64150
capabilities = net_bind_service

[beta]
executable = $TA
user = 64151
after = alpha

[off]
executable = $TA
user = 64152
enabled = no
EOC

check "mtsctl does not link libseccomp" bash -c "! ldd '$CTL' | grep -q libseccomp"
check "mtsctl does not link libcap" bash -c "! ldd '$CTL' | grep -q 'libcap\\.'"

"$CTL" config check "$c" >"$T_DIR/out" 2>"$T_DIR/err"
check "a good file: exit 0" test $? -eq 0
check "a good file: FILE: ok and the agents it would start" grep -qx "$c: ok, 2 agents" "$T_DIR/out"
check "a good file: each agent with its settings" bash -c "grep -Eq '^alpha +$TA +64150 +- +net_bind_service ' '$T_DIR/out' && grep -Eq '^beta +.* alpha\$' '$T_DIR/out' && ! grep -q '^off ' '$T_DIR/out'"
check "a good file: nothing on stderr" test ! -s "$T_DIR/err"
"$CTL" -o json config check "$c" >"$T_DIR/json"
check "-o json: one object per agent" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["name"] for r in rows] == ["alpha", "beta"], rows
assert rows[0]["user"] == "64150" and rows[1]["after"] == ["alpha"], rows
' "$T_DIR/json"

printf '[beta]\ncolour = blue\n' >>"$c"
line=$(grep -n '^colour' "$c" | cut -d: -f1)
"$CTL" config check "$c" >"$T_DIR/out" 2>"$T_DIR/err"
check "a bad file: exit 1" test $? -eq 1
check "a bad file: mts-init's FILE:LINE message, first" bash -c "head -1 '$T_DIR/err' | grep -qx \"$c:$line: unknown key 'colour' in section \\[beta\\]\""
check "a bad file: no mts-init prefix, no 'nothing started'" bash -c "! grep -q 'mts-init:\\|nothing started' '$T_DIR/err'"
check "a bad file: nothing on stdout" test ! -s "$T_DIR/out"
sed -i '/^colour = blue$/d' "$c"
sed -i 's/^user = 64151$/user = 64151\nlimit_nofile = 9223372036854775808/' "$c"
line=$(grep -n '^limit_nofile' "$c" | cut -d: -f1)
"$CTL" config check "$c" 2>"$T_DIR/err" >/dev/null
check "a value out of range: FILE:LINE message" grep -qx "$c:$line: \\[beta\\] limit_nofile = '9223372036854775808': value out of range (0 to 9223372036854775807)" "$T_DIR/err"
sed -i '/^limit_nofile = 9223372036854775808$/d' "$c"

# Which mts-init runs: the one next to mtsctl, else the first on PATH; it
# gets -n -c FILE.
mkdir -p "$T_DIR/side" "$T_DIR/lone" "$T_DIR/path"
cp "$CTL" "$T_DIR/side/mtsctl"
cp "$CTL" "$T_DIR/lone/mtsctl"
for d in side path; do
	cat >"$T_DIR/$d/mts-init" <<EOS
#!/bin/sh
printf '%s\n' "\$*" >"$T_DIR/$d.args"
printf '[node]\n\n[gamma]\nexecutable = /bin/true\nuser = 7\n'
EOS
	chmod +x "$T_DIR/$d/mts-init"
done
PATH=$T_DIR/path:$PATH "$T_DIR/side/mtsctl" config check "$c" >"$T_DIR/out" 2>&1
check "the mts-init next to mtsctl runs, with -n -c FILE" bash -c "[ \"\$(cat '$T_DIR/side.args')\" = '-n -c $c' ] && [ ! -e '$T_DIR/path.args' ]"
check "its effective configuration is what is shown" grep -qx "$c: ok, 1 agents" "$T_DIR/out"
PATH=$T_DIR/path:/usr/bin:/bin "$T_DIR/lone/mtsctl" config check "$c" >"$T_DIR/out" 2>&1
check "else the mts-init on PATH" bash -c "[ \"\$(cat '$T_DIR/path.args')\" = '-n -c $c' ]"
PATH=/nonexistent "$T_DIR/lone/mtsctl" config check "$c" >"$T_DIR/out" 2>&1
check "no mts-init anywhere: exit 1, says so" bash -c "[ $? -eq 1 ] && grep -q 'cannot run mts-init' '$T_DIR/out'"
t_done

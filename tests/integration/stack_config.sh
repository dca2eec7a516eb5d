#!/usr/bin/env bash
# stack_config.sh: `mtsctl stack config` as a user runs it — default file names, .env beside the file, env_file, several files, warnings on stderr, FILE:LINE:COLUMN errors and exit codes.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
CTL=$BIN/mtsctl
P=$T_DIR/My_Shop # the directory gives the stack's name: my_shop
mkdir -p "$P"
cd "$P" || exit 1

check "no file here: exit 5 and says which names it looked for" \
	bash -c "'$CTL' stack config 2>&1 >/dev/null | grep -q 'none of compose.yaml'; [ \${PIPESTATUS[0]} -eq 5 ]"

cat >compose.yaml <<'YML'
services:
  web:
    image: "nginx:${TAG:-latest}"
    env_file: web.env
    environment:
      FROM_FILE_OVERRIDDEN: by-environment
    privileged: true
YML
printf 'TAG=1.25\n' >.env
printf 'FROM_FILE=yes\nFROM_FILE_OVERRIDDEN=by-file\n' >web.env
"$CTL" stack config >"$T_DIR/out" 2>"$T_DIR/err"
check "compose.yaml is found without -c" test $? -eq 0
check "the stack is named after the directory" grep -q '^name: "my_shop"' "$T_DIR/out"
check ".env beside the file sets TAG" grep -q 'image: "nginx:1.25"' "$T_DIR/out"
check "the environment wins over .env" bash -c "TAG=9 '$CTL' stack config | grep -q 'nginx:9'"
check "env_file is read, environment: wins over it" \
	grep -q '"FROM_FILE": "yes", "FROM_FILE_OVERRIDDEN": "by-environment"' "$T_DIR/out"
check "privileged: one warning line naming file, service and key" \
	grep -qx 'mtsctl: warning: compose.yaml:7:5: service "web": privileged is not supported by mts: privileged containers are not run (ignored)' "$T_DIR/err"
check "--quiet prints nothing on stdout" bash -c "[ -z \"\$('$CTL' stack config -q 2>/dev/null)\" ]"

printf 'services:\n  web:\n    deploy:\n      replicas: 4\n' >prod.yml
check "a second file overrides: replicas 4" \
	bash -c "'$CTL' stack config -c compose.yaml -c prod.yml --stack shop | grep -q 'replicas: 4'"
check "--stack names the stack" \
	bash -c "'$CTL' stack config -c compose.yaml --stack shop | grep -q '^name: \"shop\"'"

printf 'services:\n  web:\n    image: nginx\n    ports: ["80:http"]\n' >bad.yml
"$CTL" stack config -c bad.yml >"$T_DIR/out" 2>"$T_DIR/err"
check "a bad port: exit 1" test $? -eq 1
check "a bad port: FILE:LINE:COLUMN and what" \
	grep -qx 'mtsctl: bad.yml:4:13: ports: "http" is not a port (1-65535) or a range' "$T_DIR/err"
check "nothing printed on error" test ! -s "$T_DIR/out"
printf 'services:\n  web:\n    image: nginx\n    env_file: missing.env\n' >missing.yml
check "a missing env_file: exit 5" bash -c "'$CTL' stack config -c missing.yml >/dev/null 2>&1; [ \$? -eq 5 ]"
check "a missing file: exit 5" bash -c "'$CTL' stack config -c nope.yml >/dev/null 2>&1; [ \$? -eq 5 ]"
check "a directory is not a file: exit 1" bash -c "'$CTL' stack config -c . >/dev/null 2>&1; [ \$? -eq 1 ]"
t_done

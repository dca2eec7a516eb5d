#!/usr/bin/env bash
# docs_match.sh: the reference docs say what the code has — docs/mtsctl.md a row for every command of `mtsctl --help` with every option of its synopsis (and no command mtsctl lacks), docs/configuration.md every key of every config schema table with its default (and no key of none); each check first proves on a scratch copy that it catches a dropped command, option and key.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
M=$(dirname "$0")/docs_match.py
CTL=$BIN/mtsctl

check "docs/mtsctl.md: every command and option of mtsctl" \
	python3 "$M" commands "$CTL" "$TOP/docs/mtsctl.md"
check "docs/configuration.md: every config key and default" \
	python3 "$M" config "$TOP"

# the checks catch what they are for
grep -v '^| `service promote ' "$TOP/docs/mtsctl.md" >"$T_DIR/nocmd.md"
out=$(python3 "$M" commands "$CTL" "$T_DIR/nocmd.md")
check "a command missing from the doc is caught" grep -q '^service promote: no row' <<<"$out"
sed "/^| \`deploy /s/ \\[--wait S\\]//" "$TOP/docs/mtsctl.md" >"$T_DIR/noopt.md"
out=$(python3 "$M" commands "$CTL" "$T_DIR/noopt.md")
check "an option missing from the doc is caught" grep -q "^deploy: option --wait " <<<"$out"
sed 's/^| `node ls` |/| `node ps` |/' "$TOP/docs/mtsctl.md" >"$T_DIR/extra.md"
out=$(python3 "$M" commands "$CTL" "$T_DIR/extra.md")
check "a command mtsctl lacks is caught" grep -q "no command 'node ps'" <<<"$out"
mkdir -p "$T_DIR/tree/docs"
cp -r "$TOP/common" "$TOP/init" "$TOP/agents" "$T_DIR/tree/"
grep -v '^| `dns_port` ' "$TOP/docs/configuration.md" >"$T_DIR/tree/docs/configuration.md"
sed -i 's/^| `settle` | `5s` |/| `settle` | `9s` |/' "$T_DIR/tree/docs/configuration.md"
out=$(python3 "$M" config "$T_DIR/tree")
check "a config key missing from the doc is caught" grep -q '^\[netd\] dns_port .* is not in' <<<"$out"
check "a wrong default is caught" grep -q "^\[reconciled\] settle: default '5s'" <<<"$out"
t_done

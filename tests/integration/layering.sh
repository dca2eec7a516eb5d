#!/usr/bin/env bash
# layering.sh: agents share only common/ and proto/ — no file includes a header of another agent (agents/X), of init/ or of cli/, and common/ depends on nothing above it (the check first proves on a scratch tree that it catches each case).
. "$(dirname "$0")/../lib.sh"
t_tmpdir

# The component a path (relative to the tree's top) belongs to: an agent,
# a program (init, cli), common, proto, or a shared library folder such as
# compose/.
component() {
	case $1 in
	agents/*/*) local r=${1#agents/}; echo "agents/${r%%/*}" ;;
	*.pb-c.h) echo proto ;;
	*/*) echo "${1%%/*}" ;;
	*) echo other ;;
	esac
}

# May component $1 include a header of component $2?
# An agent's headers are its own; init's and mtsctl's are theirs; common/
# depends on nothing but proto/. Shared libraries (compose/) may be used.
allowed() {
	[ "$1" = "$2" ] && return 0
	case $2 in
	common | proto) return 0 ;;
	esac
	[ "$1" = common ] && return 1
	case $2 in
	agents/* | init | cli) return 1 ;;
	esac
	return 0
}

# Where the compiler would find `#include "inc"` written in file f:
# f's own folder, then -I. and -Icommon (the Makefile's CPPFLAGS).
resolve() { # top, f, inc
	local top=$1 f=$2 inc=$3 d c
	case $inc in
	*.pb-c.h) echo "$inc"; return ;;
	esac
	for d in "$(dirname "$f")" . common; do
		c=$(realpath -m --relative-to="$top" "$top/$d/$inc")
		[ -f "$top/$c" ] && { echo "$c"; return; }
	done
}

# scan TOP: prints "FILE includes HEADER" for every forbidden include of the
# tree at TOP; fails if there is any.
scan() {
	local top=$1 f inc h bad=0
	while read -r f; do
		while read -r inc; do
			h=$(resolve "$top" "$f" "$inc")
			[ -n "$h" ] || continue
			if ! allowed "$(component "$f")" "$(component "$h")"; then
				echo "$f includes $h (a header private to" \
				    "$(component "$h"); share it through common/)"
				bad=1
			fi
		done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1/p' "$top/$f")
	done < <(cd "$top" && find . -path ./build\* -prune -o -path ./tests -prune -o -name '*.[ch]' -print 2>/dev/null | sed 's|^\./||' | sort)
	return $bad
}

# The check catches what it is meant to catch: a scratch tree with one agent
# including another's header, and mtsctl including an agent's.
s=$T_DIR/tree
mkdir -p "$s/agents/a" "$s/agents/b" "$s/common" "$s/cli" "$s/lib"
echo '#include "agents/b/b.h"' >"$s/agents/a/a.c"
echo '#include "../b/b.h"' >"$s/agents/a/a2.c"
echo '#include "b.h"' >"$s/agents/b/b.c"
: >"$s/agents/b/b.h"
printf '#include "buf.h"\n#include "x.pb-c.h"\n' >"$s/agents/b/ok.c"
: >"$s/common/buf.h"
echo '#include "agents/b/b.h"' >"$s/cli/c.c"
printf '#include "lib/l.h"\n' >"$s/cli/c2.c"
: >"$s/lib/l.h"
echo '#include "lib/l.h"' >"$s/common/c.c"
scan "$s" >"$T_DIR/scratch.out"
check "a bad include fails the check" test $? -ne 0
check "it prints which file includes what" grep -qx 'agents/a/a.c includes agents/b/b.h .*' "$T_DIR/scratch.out"
check "a relative path is caught too" grep -q '^agents/a/a2.c includes agents/b/b.h' "$T_DIR/scratch.out"
check "cli including an agent's header is caught" grep -q '^cli/c.c includes agents/b/b.h' "$T_DIR/scratch.out"
check "common depending on a library is caught" grep -q '^common/c.c includes lib/l.h' "$T_DIR/scratch.out"
check "own, common, proto and library headers pass" test "$(wc -l <"$T_DIR/scratch.out")" -eq 4

scan "$TOP" >"$T_DIR/tree.out"
rc=$?
sed 's/^/    /' "$T_DIR/tree.out"
check "the tree: no agent, init or cli file includes another agent's header" test $rc -eq 0
t_done

#!/usr/bin/env bash
# format_check.sh: `make format-check` in make test — every C file git tracks is laid out as .clang-format says (`make format` lays it out).
. "$(dirname "$0")/../lib.sh"
command -v clang-format >/dev/null || skip_all "no clang-format"
git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout"
out=$(make -s -C "$TOP" format-check 2>&1)
rc=$?
check "make format-check: the tree is as .clang-format says" test $rc -eq 0
[ $rc -eq 0 ] || echo "$out" | head -20
t_done

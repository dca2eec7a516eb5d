#!/usr/bin/env python3
# docs_match.py: the docs against the code — `commands MTSCTL DOC`: every command of `mtsctl --help` has a row in DOC's tables with every option of its synopsis, and no row names a command mtsctl lacks; `config TOP`: every key of the config schema tables (common/confschema.c, init/init_schema.c, agents/*/*_conf.c) is in TOP/docs/configuration.md with its default, and no key there is in no table. Prints each problem; exit 1 when there is one.
import glob
import re
import subprocess
import sys


def commands(ctl, doc):
    help_ = subprocess.run([ctl, "--help"], capture_output=True,
                           text=True).stdout
    cmds, on = [], False
    for l in help_.splitlines():
        if l == "COMMANDS":
            on = True
            continue
        if on and not l:
            break
        if on:
            cmds.append(l[4:28].strip())
    rows = []  # (commands the row covers, its first cell, the rest)
    for l in open(doc):
        m = re.match(r"\| `([^`]+)`(.*)", l.replace("\\|", "|"))
        if not m:
            continue
        cell, rest = m.group(1), m.group(2)
        words = cell.split(" ", 1)
        cov, first = {words[0]}, None
        if len(words) > 1:
            for piece in words[1].split("|"):
                w = piece.strip().split(" ")[0]
                first = first or w
                if re.fullmatch(r"[a-z]+", w):
                    cov.add(words[0] + " " + w)
        rows.append((cov, cell, rest, words[0], first))
    bad = []
    groups = {c.split()[0] for c in cmds}
    for cov, cell, rest, g, first in rows:
        if g not in groups:
            continue  # another table (options, exit codes)
        if first and re.fullmatch(r"[a-z]+", first) and \
                g + " " + first not in cmds and g not in cmds:
            bad.append(f"{doc}: `{cell}`: mtsctl has no command "
                       f"'{g} {first}'")
    for c in cmds:
        rs = [r for r in rows if c in r[0]]
        if not rs:
            bad.append(f"{c}: no row in {doc}")
            continue
        h = subprocess.run([ctl] + c.split() + ["--help"],
                           capture_output=True, text=True).stdout
        syn = h.split("SYNOPSIS\n", 1)[1].split("\n\n", 1)[0]
        syn = syn.split(" " + c, 1)[1] if (" " + c) in syn else syn
        opts = set(re.findall(
            r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])", syn))
        text = " ".join(r[1] + r[2] for r in rs)
        for o in sorted(opts - {"-h"}):
            if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])",
                             text):
                bad.append(f"{c}: option {o} of its synopsis not in {doc}")
    return bad


def config(top):
    src = [top + "/common/confschema.c", top + "/init/init_schema.c"] + \
        sorted(glob.glob(top + "/agents/*/*_conf.c"))
    ent = re.compile(r'\{\s*"([^"]*)",\s*"([^"]*)",\s*MTS_CFG_\w+,\s*'
                     r'(NULL|"((?:[^"\\]|\\.)*)")', re.S)
    keys = {}  # (section, key) -> default (None: NULL)
    for f in src:
        for m in ent.finditer(open(f).read()):
            if m.group(2):
                keys[(m.group(1), m.group(2))] = m.group(4)
    doc, sec = {}, None
    for l in open(top + "/docs/configuration.md"):
        m = re.match(r"## \[([a-z0-9_*-]+)\]", l)
        if m:
            sec = m.group(1)
            continue
        if l.startswith("## "):
            sec = "*" if "Agent sections" in l else None
            continue
        m = re.match(r"\| `([a-z0-9_]+)` \|\s*([^|]*?)\s*\|", l)
        if m and sec:
            doc[(sec, m.group(1))] = m.group(2)
    bad = []
    for (s, k), d in sorted(keys.items()):
        if (s, k) not in doc:
            bad.append(f"[{s}] {k} (default {d!r}) is not in "
                       "docs/configuration.md")
        elif d not in (None, "") and d not in doc[(s, k)].replace("`", ""):
            bad.append(f"[{s}] {k}: default {d!r} in its table, "
                       f"{doc[(s, k)]!r} in docs/configuration.md")
    for (s, k) in sorted(doc):
        if (s, k) not in keys:
            bad.append(f"[{s}] {k} is in docs/configuration.md but in no "
                       "table")
    return bad


bad = commands(*sys.argv[2:4]) if sys.argv[1] == "commands" else \
    config(sys.argv[2])
print("\n".join(bad))
sys.exit(1 if bad else 0)

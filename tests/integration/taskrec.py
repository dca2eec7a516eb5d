#!/usr/bin/env python3
"""taskrec.py: writes a t/<node>/<task> record (proto/shim.proto's TaskStatus, packed) to stdout, for suites that plant a task record by hand with `mtsctl state put KEY -`.

usage: taskrec.py NAME=VALUE ...
  id state error desired (strings), exit_code started_at finished_at slot
  assigned_at (numbers), service and version (its spec's service and
  service_version)
"""
import sys

FIELDS = {"id": 1, "state": 2, "exit_code": 3, "started_at": 9,
          "finished_at": 10, "error": 11, "desired": 15, "slot": 18,
          "assigned_at": 19}
SPEC = {"service": 18, "version": 21}
NUMBERS = {"exit_code", "started_at", "finished_at", "slot", "assigned_at",
           "version"}


def varint(n):
    b = b""
    while True:
        c, n = n & 0x7f, n >> 7
        b += bytes([c | (0x80 if n else 0)])
        if not n:
            return b


def fld(num, val):
    if isinstance(val, int):
        return varint(num << 3) + varint(val)
    val = val.encode() if isinstance(val, str) else val
    return varint(num << 3 | 2) + varint(len(val)) + val


def main(args):
    rec, spec = {}, b""
    for a in args:
        name, _, value = a.partition("=")
        if name not in FIELDS and name not in SPEC:
            sys.exit("taskrec.py: no field %s" % name)
        v = int(value) if name in NUMBERS else value
        if name in SPEC:
            spec += fld(SPEC[name], v)
        else:
            rec[FIELDS[name]] = v
    if spec:
        rec[13] = spec
    sys.stdout.buffer.write(b"".join(fld(n, rec[n]) for n in sorted(rec)))


main(sys.argv[1:])

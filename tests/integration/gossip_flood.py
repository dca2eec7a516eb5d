#!/usr/bin/env python3
"""gossip_flood.py: an unauthenticated TCP flood for gossip_flood.sh — COUNT idle connections to 127.0.0.1:PORT, spread over SECONDS and over SOURCES loopback addresses (127.0.0.1, 127.0.0.2, ...), each held silent until the server closes it or HOLD seconds after the last one opened; then everything is closed.

usage: gossip_flood.py PORT COUNT SOURCES SECONDS HOLD
Prints "opened N refused N closed-by-server N" at the end.
"""
import errno
import resource
import selectors
import socket
import sys
import time


def main(argv):
    if len(argv) != 6:
        sys.stderr.write(__doc__)
        return 2
    port, count, sources = int(argv[1]), int(argv[2]), int(argv[3])
    seconds, hold = float(argv[4]), float(argv[5])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, count + 64)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    sel = selectors.DefaultSelector()
    opened = refused = closed = 0
    start = time.monotonic()
    i = 0
    deadline = None
    while True:
        now = time.monotonic()
        # open the connections due by now (count spread over seconds)
        due = count if seconds <= 0 else \
            min(count, int(count * (now - start) / seconds) + 1)
        while i < due:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.bind(("127.0.0.%d" % (1 + i % sources), 0))
                rc = s.connect_ex(("127.0.0.1", port))
            except OSError:
                rc = errno.ECONNREFUSED
            i += 1
            if rc not in (0, errno.EINPROGRESS):
                refused += 1
                s.close()
                continue
            opened += 1
            sel.register(s, selectors.EVENT_READ)
        if i >= count and deadline is None:
            deadline = now + hold
        if deadline is not None and now >= deadline:
            break
        for key, _ in sel.select(timeout=0.02):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                closed += 1
                sel.unregister(s)
                s.close()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    print("opened %d refused %d closed-by-server %d" % (opened, refused, closed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

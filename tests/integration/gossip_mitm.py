#!/usr/bin/env python3
# gossip_mitm.py: a man-in-the-middle TCP proxy for gossipd's length-prefixed Noise frames that, on command, flips a byte in or replays one transport frame.
#
# usage: gossip_mitm.py CTLDIR LISTEN:UPSTREAM...
# Each LISTEN port forwards to UPSTREAM on 127.0.0.1, frame by frame, both
# ways. Handshake frames (the first frame of each direction, and the second
# client frame of a 48-byte-first-frame join) always pass untouched. When
# CTLDIR/cmd holds "tamper" or "replay", the next client-to-server transport
# frame (on whichever connection carries one first) gets one byte flipped,
# or is sent twice. Events go to CTLDIR/events, one line each:
#   ready | open conn=N to=UPSTREAM | <mode> conn=N to=UPSTREAM len=L | closed conn=N by server|client
import os
import socket
import struct
import sys
import threading

CTL = sys.argv[1]
lock = threading.Lock()
next_id = [0]


def event(line):
    with lock:
        with open(os.path.join(CTL, "events"), "a") as f:
            f.write(line + "\n")


def claim():
    """Takes the pending command, if any (rename is atomic: one taker)."""
    cmd = os.path.join(CTL, "cmd")
    mine = os.path.join(CTL, "cmd.%d" % threading.get_ident())
    try:
        os.rename(cmd, mine)
    except FileNotFoundError:
        return None
    with open(mine) as f:
        mode = f.read().strip()
    os.unlink(mine)
    return mode


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def pump(src, dst, conn, to_server, upstream, closed):
    nframe = 0
    join = False
    try:
        while True:
            hdr = read_exact(src, 4)
            if hdr is None:
                break
            (n,) = struct.unpack(">I", hdr)
            body = read_exact(src, n) if n else b""
            if body is None:
                break
            if nframe == 0 and n == 48:
                join = True
            handshake = nframe == 0 or (join and to_server and nframe == 1)
            nframe += 1
            mode = None
            if to_server and not handshake:
                mode = claim()
            if mode == "tamper" and n > 0:
                b = bytearray(body)
                b[n // 2] ^= 0x01
                dst.sendall(hdr + bytes(b))
            elif mode == "replay":
                dst.sendall(hdr + body + hdr + body)
            else:
                dst.sendall(hdr + body)
            if mode:
                event("%s conn=%d to=%d len=%d" % (mode, conn, upstream, n))
    except OSError:
        pass
    with lock:
        first = closed[0] == 0
        closed[0] += 1
        last = closed[0] == 2
    if first:
        event("closed conn=%d by %s" % (conn, "client" if to_server else "server"))
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if last:
            s.close()


def serve(listener, upstream):
    while True:
        c, _ = listener.accept()
        try:
            u = socket.create_connection(("127.0.0.1", upstream))
        except OSError:
            c.close()
            continue
        with lock:
            next_id[0] += 1
            conn = next_id[0]
        event("open conn=%d to=%d" % (conn, upstream))
        closed = [0]
        for args in ((c, u, conn, True, upstream, closed),
                     (u, c, conn, False, upstream, closed)):
            threading.Thread(target=pump, args=args, daemon=True).start()


def main():
    threads = []
    for spec in sys.argv[2:]:
        lport, uport = (int(x) for x in spec.split(":"))
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", lport))
        ls.listen(16)
        t = threading.Thread(target=serve, args=(ls, uport), daemon=True)
        t.start()
        threads.append(t)
    event("ready")
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()

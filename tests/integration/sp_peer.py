#!/usr/bin/env python3
"""sp_peer.py: a bare SP-over-IPC peer for the listener tests — breaks off handshakes, holds silent connections, checks greetings and reads a PUB feed.

usage: sp_peer.py partial SOCKET N        N times (50 ms apart): connect,
                                          send "\\0SP", close
       sp_peer.py idle SOCKET SECONDS     connect, say nothing; exit 0 if the
                                          server closed it within SECONDS
       sp_peer.py hello SOCKET PROTO      full greeting as PROTO (req|sub);
                                          exit 0 if the server greets back
                                          as rep|pub
       sp_peer.py sub SOCKET TOPIC SECONDS  subscribe; exit 0 once a message
                                          whose topic starts with TOPIC came
                                          (prints "subscribed" once greeted)
"""
import socket
import struct
import sys
import time

PROTO = {"req": 0x30, "rep": 0x31, "pub": 0x20, "sub": 0x21}
PEER = {"req": "rep", "sub": "pub"}


def greeting(proto):
    return b"\0SP\0" + struct.pack(">H", PROTO[proto]) + b"\0\0"


def connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def partial(path, count):
    for i in range(int(count)):
        s = connect(path)
        s.sendall(b"\0SP")
        s.close()
        time.sleep(0.05)
    return 0


def idle(path, seconds):
    s = connect(path, timeout=float(seconds))
    try:
        while s.recv(4096):
            pass  # a REP server greets first; keep reading until it hangs up
        return 0
    except socket.timeout:
        return 1


def hello(path, proto):
    s = connect(path)
    s.sendall(greeting(proto))
    got = read_exact(s, 8)
    s.close()
    return 0 if got == greeting(PEER[proto]) else 1


def sub(path, topic, seconds):
    deadline = time.monotonic() + float(seconds)
    s = connect(path)
    s.sendall(greeting("sub"))
    if read_exact(s, 8) != greeting("pub"):
        return 1
    print("subscribed", flush=True)
    want = topic.encode()
    while time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            kind, n = struct.unpack(">BQ", read_exact(s, 9))
        except socket.timeout:
            return 1
        body = read_exact(s, n)
        if kind == 1 and body.startswith(want):
            return 0
    return 1


def main(argv):
    cmds = {"partial": (partial, 2), "idle": (idle, 2), "hello": (hello, 2),
            "sub": (sub, 3)}
    if len(argv) < 2 or argv[1] not in cmds or \
            len(argv) != 2 + cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    try:
        return cmds[argv[1]][0](*argv[2:])
    except (OSError, EOFError) as e:
        sys.stderr.write("sp_peer: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

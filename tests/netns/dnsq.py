#!/usr/bin/env python3
# dnsq.py: the DNS client and stand-in upstream resolver of the netns tests — `dnsq.py SERVER NAME [TYPE]` prints "RCODE ADDR..." of one UDP query (A records, sorted; PTR: the names); `dnsq.py --tcp SERVER NAME` asks over TCP; `dnsq.py --raw SERVER HEX` sends those bytes and prints "RCODE" of the reply or "none"; `dnsq.py --serve ADDR PORT ANSWER` answers every A query with ANSWER; `dnsq.py --time SERVER NAME N` prints p50 and p99 in ms of N queries.
import socket
import struct
import sys
import time

RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
TYPES = {"A": 1, "AAAA": 28, "TXT": 16, "PTR": 12}


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(name, qtype, qid):
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + encode_name(name) + struct.pack(">HH", qtype, 1)


def skip_name(msg, off):
    while True:
        n = msg[off]
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1
        if n == 0:
            return off
        off += n


def read_name(msg, off):
    labels, hops = [], 0
    while hops < 64:
        n = msg[off]
        if n & 0xC0 == 0xC0:
            off = ((n & 0x3F) << 8) | msg[off + 1]
            hops += 1
            continue
        if n == 0:
            break
        labels.append(msg[off + 1:off + 1 + n].decode())
        off += 1 + n
    return ".".join(labels) + "."


def parse(msg):
    qid, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    off = 12
    for _ in range(qd):
        off = skip_name(msg, off) + 4
    addrs = []
    for _ in range(an):
        off = skip_name(msg, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        if rtype == 1 and rdlen == 4:
            addrs.append(socket.inet_ntoa(msg[off:off + 4]))
        elif rtype == 12:
            addrs.append(read_name(msg, off))
        off += rdlen
    return qid, flags, RCODES.get(flags & 15, str(flags & 15)), sorted(addrs)


def ask(server, data, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    s.sendto(data, (server, 53))
    try:
        return s.recv(65535)
    except socket.timeout:
        return None
    finally:
        s.close()


def ask_tcp(server, data, timeout=5.0):
    s = socket.create_connection((server, 53), timeout)
    try:
        s.sendall(struct.pack(">H", len(data)) + data)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
            c = s.recv(65535)
            if not c:
                return None
            buf += c
        return buf[2:]
    finally:
        s.close()


def serve(addr, port, answer):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    while True:
        msg, peer = s.recvfrom(65535)
        qid, flags, qd = struct.unpack(">HHH", msg[:6])
        end = skip_name(msg, 12) + 4
        q = msg[12:end]
        reply = struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0) + q
        reply += b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 30, 4) + socket.inet_aton(answer)
        s.sendto(reply, peer)


def main(argv):
    if argv[1] == "--serve":
        serve(argv[2], int(argv[3]), argv[4])
    elif argv[1] == "--raw":
        r = ask(argv[2], bytes.fromhex(argv[3]), 1.0)
        print("none" if r is None else parse(r)[2] if len(r) >= 12 else "short")
    elif argv[1] == "--tcp":
        r = ask_tcp(argv[2], query(argv[3], 1, 0x4343))
        print("none" if r is None else " ".join([parse(r)[2]] + parse(r)[3]))
    elif argv[1] == "--time":
        server, name, n = argv[2], argv[3], int(argv[4])
        ms = []
        for i in range(n):
            t = time.monotonic()
            r = ask(server, query(name, 1, i & 0xFFFF))
            if r is None:
                print("timeout")
                return 1
            ms.append((time.monotonic() - t) * 1000)
        ms.sort()
        print("%.3f %.3f" % (ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))]))
    else:
        qtype = TYPES[argv[3]] if len(argv) > 3 else 1
        r = ask(argv[1], query(argv[2], qtype, 0x4242))
        if r is None:
            print("timeout")
            return 1
        qid, flags, rcode, addrs = parse(r)
        if qid != 0x4242:
            print("wrong-id")
            return 1
        print(" ".join([rcode] + addrs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

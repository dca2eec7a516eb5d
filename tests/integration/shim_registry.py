#!/usr/bin/env python3
"""shim_registry.py: a small OCI distribution registry for shim_pull_limits.sh that misbehaves on purpose, by repository — good, trickle (blobs at 1 byte/s), slow (fast enough for a low-speed limit, too slow for a deadline), oversend (a layer longer than declared), short (a layer declared one byte longer than it is), huge (a layer declared 2^40 bytes).

usage: shim_registry.py PORT LAYOUT LOG

Serves the image of the OCI layout LAYOUT (its first manifest) as
REPO:latest for every REPO above; LOG gets one line per request.
"""
import hashlib
import http.server
import json
import os
import sys
import time


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


port, layout, logpath = int(sys.argv[1]), sys.argv[2], sys.argv[3]
blobdir = os.path.join(layout, "blobs/sha256")
index = json.load(open(os.path.join(layout, "index.json")))
base = json.load(open(os.path.join(blobdir, index["manifests"][0]["digest"][7:])))
blobs = {n: open(os.path.join(blobdir, n), "rb").read() for n in os.listdir(blobdir)}
LAYER = base["layers"][0]["digest"]


def manifest(repo):
    m = json.loads(json.dumps(base))
    if repo == "huge":
        m["layers"][0]["size"] = 1 << 40
    elif repo == "short":
        m["layers"][0]["size"] += 1
    return json.dumps(m).encode()


log = open(logpath, "a", buffering=1)


class Registry(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def send(self, code, body, ctype="application/json", length=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        if ctype.startswith("application/vnd.oci"):
            self.send_header("Docker-Content-Digest", sha(body))
        self.end_headers()

    def do_GET(self):
        log.write("GET %s\n" % self.path)
        parts = self.path.split("/")  # "", "v2", repo, kind, ref
        if self.path in ("/v2/", "/v2"):
            self.send(200, b"{}")
            self.wfile.write(b"{}")
            return
        if len(parts) != 5 or parts[1] != "v2":
            self.send(404, b"")
            return
        repo, kind, ref = parts[2], parts[3], parts[4]
        if kind == "manifests":
            body = manifest(repo)
            self.send(200, body, "application/vnd.oci.image.manifest.v1+json")
            self.wfile.write(body)
            return
        body = blobs.get(ref[7:]) if kind == "blobs" else None
        if body is None:
            self.send(404, b"")
            return
        try:
            self.blob(repo, ref, body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def blob(self, repo, ref, body):
        if repo == "oversend" and ref == LAYER:
            body = body + b"\0" * 65536
        self.send(200, body, "application/octet-stream")
        if repo == "trickle":
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(1)
        elif repo == "slow":
            for i in range(0, len(body), 4096):
                self.wfile.write(body[i:i + 4096])
                self.wfile.flush()
                time.sleep(0.5)
        else:
            self.wfile.write(body)


http.server.ThreadingHTTPServer(("127.0.0.1", port), Registry).serve_forever()

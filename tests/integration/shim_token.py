#!/usr/bin/env python3
"""shim_token.py: a minimal registry token server for shim_pull.sh — answers GET /token?service=..&scope=.. with an RS256 JWT (x5c header) that docker-registry accepts; logs each request to stderr.

usage: shim_token.py PORT KEY.pem CERT.pem ISSUER
"""
import base64
import http.server
import json
import os
import subprocess
import sys
import time
import urllib.parse

port, key, cert, issuer = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
der = subprocess.run(["openssl", "x509", "-in", cert, "-outform", "DER"],
                     check=True, capture_output=True).stdout


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token(service, scopes):
    access = []
    for s in scopes:
        parts = s.split(":")
        if len(parts) == 3:
            access.append({"type": parts[0], "name": parts[1],
                           "actions": parts[2].split(",")})
    now = int(time.time())
    head = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
    claims = {"iss": issuer, "sub": "mts-test", "aud": service, "exp": now + 600,
              "nbf": now - 60, "iat": now, "jti": b64(os.urandom(12)),
              "access": access}
    signing = (b64(json.dumps(head).encode()) + "." +
               b64(json.dumps(claims).encode())).encode()
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key],
                         input=signing, check=True, capture_output=True).stdout
    return signing.decode() + "." + b64(sig)


class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path != "/token":
            self.send_error(404)
            return
        body = json.dumps({"token": token(q.get("service", [""])[0],
                                          q.get("scope", []))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("token: " + (fmt % args) + "\n")


http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()

#!/usr/bin/env python3
"""shim_images.py: builds test OCI image layouts for shim_image.sh and shim_rootfs.sh — whiteouts over the busybox layer, malformed images (path traversal, absolute paths, symlink escapes, missing or corrupt blobs), and hostile /etc/passwd files.

usage: shim_images.py KIND OUT BUSYBOX_LAYOUT [ARG]
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def tar_bytes(entries):
    """entries: (name, kind, data) with kind file|dir|symlink|hardlink|fifo."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            if kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            elif kind == "symlink":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
                t.addfile(ti)
            elif kind == "hardlink":
                ti.type, ti.linkname = tarfile.LNKTYPE, data
                t.addfile(ti)
            elif kind == "fifo":
                ti.type, ti.mode = tarfile.FIFOTYPE, 0o644
                t.addfile(ti)
            else:
                raw = data.encode()
                ti.size, ti.mode = len(raw), 0o644
                t.addfile(ti, io.BytesIO(raw))
    return buf.getvalue()


def busybox_layer(src):
    """The (compressed blob, diff id) of the busybox layout's only layer."""
    idx = json.load(open(os.path.join(src, "index.json")))
    mdig = idx["manifests"][0]["digest"].split(":")[1]
    man = json.load(open(os.path.join(src, "blobs/sha256", mdig)))
    ldig = man["layers"][0]["digest"].split(":")[1]
    blob = open(os.path.join(src, "blobs/sha256", ldig), "rb").read()
    return blob, sha(gzip.decompress(blob))


def write_layout(out, name, layers, missing=None, corrupt=None):
    """layers: list of (blob, diff_id). missing/corrupt: index of a layer
    whose blob is left out / altered after hashing."""
    os.makedirs(os.path.join(out, "blobs/sha256"), exist_ok=True)

    def put(b):
        d = sha(b)
        open(os.path.join(out, "blobs/sha256", d[7:]), "wb").write(b)
        return d

    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "config": {"Env": ["PATH=/bin"], "Cmd": ["sh"]},
                      "rootfs": {"type": "layers",
                                 "diff_ids": [d for _, d in layers]}}).encode()
    ldesc = []
    for i, (blob, _) in enumerate(layers):
        d = sha(blob)
        ldesc.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip"
                      if blob[:2] == b"\x1f\x8b" else
                      "application/vnd.oci.image.layer.v1.tar",
                      "digest": d, "size": len(blob)})
        if i == missing:
            continue
        path = os.path.join(out, "blobs/sha256", d[7:])
        open(path, "wb").write(blob)
        if i == corrupt:
            with open(path, "r+b") as f:
                f.seek(len(blob) // 2)
                f.write(b"CORRUPTED")
    man = json.dumps({"schemaVersion": 2,
                      "mediaType": "application/vnd.oci.image.manifest.v1+json",
                      "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                 "digest": put(cfg), "size": len(cfg)},
                      "layers": ldesc}).encode()
    md = put(man)
    json.dump({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json",
         "digest": md, "size": len(man),
         "annotations": {"io.containerd.image.name": name}}]},
        open(os.path.join(out, "index.json"), "w"))
    open(os.path.join(out, "oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')


def write_multiarch(out, base):
    """index.json -> an image index (tag "multi") of an arm64 and an amd64
    manifest over the same busybox layer."""
    os.makedirs(os.path.join(out, "blobs/sha256"), exist_ok=True)

    def put(b):
        d = sha(b)
        open(os.path.join(out, "blobs/sha256", d[7:]), "wb").write(b)
        return d, len(b)

    ld, lsize = put(base[0])
    mans = []
    for arch in ("arm64", "amd64"):
        cfg = json.dumps({"architecture": arch, "os": "linux",
                          "config": {"Env": ["PATH=/bin"], "Cmd": ["sh"]},
                          "rootfs": {"type": "layers",
                                     "diff_ids": [base[1]]}}).encode()
        cd, cs = put(cfg)
        man = json.dumps({"schemaVersion": 2,
                          "mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                     "digest": cd, "size": cs},
                          "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                                      "digest": ld, "size": lsize}]}).encode()
        md, ms = put(man)
        mans.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "digest": md, "size": ms,
                     "platform": {"architecture": arch, "os": "linux"}})
    idx = json.dumps({"schemaVersion": 2,
                      "mediaType": "application/vnd.oci.image.index.v1+json",
                      "manifests": mans}).encode()
    xd, xs = put(idx)
    json.dump({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.index.v1+json",
         "digest": xd, "size": xs,
         "annotations": {"org.opencontainers.image.ref.name": "multi"}}]},
        open(os.path.join(out, "index.json"), "w"))
    open(os.path.join(out, "oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')


def plain(entries):
    t = tar_bytes(entries)
    return t, sha(t)


def main():
    kind, out, bb = sys.argv[1], sys.argv[2], sys.argv[3]
    arg = sys.argv[4] if len(sys.argv) > 4 else "x"
    base = busybox_layer(bb)
    if kind == "whiteout":
        l1 = plain([("a", "dir", None), ("a/keep", "file", "keep\n"),
                    ("a/gone", "file", "gone\n"), ("opq", "dir", None),
                    ("opq/old", "file", "old\n"), ("top", "file", "top\n"),
                    ("link", "hardlink", "a/keep")])
        l2 = plain([("a/.wh.gone", "file", ""), ("opq", "dir", None),
                    ("opq/.wh..wh..opq", "file", ""),
                    ("opq/new", "file", "new\n"), (".wh.top", "file", ""),
                    ("added", "file", "added\n")])
        write_layout(out, "whiteout:latest", [base, l1, l2])
    elif kind == "multiarch":
        write_multiarch(out, base)
    elif kind == "traversal":
        write_layout(out, "evil:traversal",
                     [base, plain([("../../" + arg, "file", "pwned\n")])])
    elif kind == "absolute":
        write_layout(out, "evil:absolute",
                     [base, plain([(arg, "file", "pwned\n")])])
    elif kind == "symlink":
        write_layout(out, "evil:symlink",
                     [base, plain([("esc", "symlink", arg),
                                   ("esc/pwned", "file", "pwned\n")])])
    elif kind == "hardlink":
        write_layout(out, "evil:hardlink",
                     [base, plain([("h", "hardlink", "../../" + arg)])])
    elif kind == "passwd":
        # etc/passwd replaced by something hostile (arg): "shadow" a link
        # to /etc/shadow, "escape" a link climbing out with ../, "fifo" a
        # FIFO; "shadow" also brings the image's own /etc/shadow, which is
        # what the link means inside the container.
        top = {"shadow": [("etc/passwd", "symlink", "/etc/shadow"),
                          ("etc/shadow", "file", "root:x:4242:4243::/root:/bin/sh\n")],
               "escape": [("etc/passwd", "symlink",
                           "../../../../../../../../../../etc/shadow")],
               "fifo": [("etc/passwd", "fifo", None)]}[arg]
        write_layout(out, "evil:" + arg, [base, plain([("etc", "dir", None)] + top)])
    elif kind == "missing":
        write_layout(out, "broken:missing", [base, plain([("f", "file", "f\n")])],
                     missing=1)
    elif kind == "corrupt":
        write_layout(out, "broken:corrupt", [base], corrupt=0)
    elif kind == "diffid":
        blob, _ = plain([("f", "file", "f\n")])
        write_layout(out, "broken:diffid", [base, (blob, sha(b"other"))])
    else:
        sys.exit("unknown kind " + kind)


main()

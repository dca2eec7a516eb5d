#!/usr/bin/env python3
# shim_syscalls.py: run inside a container (host /usr bind-mounted) by shim_sandbox.sh — tries syscalls that seccomp filters may deny and prints "NAME ok" or "NAME errno NAME" for each, each in a fresh child.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return r, ctypes.get_errno()


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def vm_readv():
    src = ctypes.create_string_buffer(b"x" * 16)
    dst = ctypes.create_string_buffer(16)
    local = Iovec(ctypes.cast(dst, ctypes.c_void_p), 16)
    remote = Iovec(ctypes.cast(src, ctypes.c_void_p), 16)
    return sc(310, os.getpid(), ctypes.addressof(local), 1,
              ctypes.addressof(remote), 1, 0)


# x86_64 numbers; each returns (result, errno).
CHECKS = {
    # denied by the container's default profile only
    "unshare_user": lambda: sc(272, 0x10000000),       # CLONE_NEWUSER
    "keyctl": lambda: sc(250, 0, -3, 0),               # GET_KEYRING_ID session
    "mount": lambda: sc(165, 0, 0, 0, 0, 0),
    # denied by the shim's deny-list (config/seccomp/shim.policy) too
    "kcmp": lambda: sc(312, os.getpid(), os.getpid(), 0, 0, 0),  # KCMP_FILE
    "process_vm_readv": vm_readv,
    "ptrace_traceme": lambda: sc(101, 0, 0, 0, 0),
    "userfaultfd": lambda: sc(323, 1),                 # UFFD_USER_MODE_ONLY
    "kexec_load": lambda: sc(246, 0, 0, 0, 0),
    "bpf": lambda: sc(321, 0, 0, 0),
}


def run(name):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        res, err = CHECKS[name]()
        out = "ok" if res >= 0 else "errno " + errno.errorcode.get(err, str(err))
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 100).decode()
    os.close(r)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        out = "killed by signal %d" % os.WTERMSIG(st)
    return out


for n in sys.argv[1:] or CHECKS:
    print(n, run(n), flush=True)

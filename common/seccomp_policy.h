/* seccomp_policy.h (not seccomp.h, which would hide libseccomp's header under -Icommon): per-agent seccomp policies (config/seccomp/<agent>.policy) — parsing, and compiling to a BPF program with libseccomp. */
#ifndef MTS_SECCOMP_POLICY_H
#define MTS_SECCOMP_POLICY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Policy text, one rule a line, '#' starts a comment:
 *
 *   default kill          allow-list (the default): syscalls not listed
 *                         kill the process
 *   default allow         deny-list: listed syscalls kill the process,
 *                         everything else is allowed (the shim)
 *   NAME [COND...]        a syscall; with conditions, only when all hold
 *                         (several lines for one name mean "any of them")
 *   NAME [COND...] => errno E
 *                         the call fails with errno E (ENOSYS, EPERM,
 *                         EACCES, EINVAL, EAFNOSUPPORT or a number): e.g.
 *                         clone3 => errno ENOSYS makes glibc fall back to
 *                         clone, whose flags a filter can check
 *
 * A condition is argN OP VALUE with N in 0..5 and OP one of == != < <= >
 * >=, or argN & MASK == VALUE. Values are numbers (decimal or 0x hex) or
 * constants: AF_UNIX AF_INET AF_INET6 AF_NETLINK PROT_EXEC PROT_WRITE ...
 */
struct mts_seccomp_policy;

/* Parses policy text; errors are "FILE:LINE: what". */
int mts_seccomp_parse(const char *text, const char *file,
    struct mts_seccomp_policy **out, char *err, size_t errlen);
/* Reads (at most 256 KiB) and parses a policy file. */
int mts_seccomp_load(const char *path, struct mts_seccomp_policy **out,
    char *err, size_t errlen);
void mts_seccomp_free(struct mts_seccomp_policy *);
/* Number of rules (for logs). */
size_t mts_seccomp_nrules(const struct mts_seccomp_policy *);

/*
 * Compiles the policy for the native architecture (others are killed) and
 * writes the BPF program (struct sock_filter[]) to fd. debug: denied
 * syscalls raise SIGSYS (SCMP_ACT_TRAP) instead of killing, and the few
 * syscalls the reporting handler needs are allowed.
 */
int mts_seccomp_export(const struct mts_seccomp_policy *, int debug, int fd,
    char *err, size_t errlen);

/* The name of syscall nr on audit arch `arch` into out ("nr N" if unknown). */
void mts_seccomp_syscall_name(uint32_t arch, int nr, char *out, size_t outlen);

#endif

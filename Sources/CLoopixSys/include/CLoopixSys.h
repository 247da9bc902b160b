#ifndef CLOOPIXSYS_H
#define CLOOPIXSYS_H
/// Linux calls that Swift's Glibc module does not import. Every symbol carries the
/// `CLoopixSys_` prefix. Each returns 0 or -1 with errno set, like the call it wraps.

/// renameat2(2) with RENAME_NOREPLACE: moves `from` to `to` only if `to` does not exist
/// (EEXIST otherwise). EINVAL or ENOSYS mean the filesystem or kernel lacks the flag.
int CLoopixSys_renameNoReplace(int fromDirFD, const char *from, int toDirFD, const char *to);

/// Names the calling thread (at most 15 bytes show in ps/top): prctl(PR_SET_NAME).
void CLoopixSys_setThreadName(const char *name);

#include <sys/types.h>

/// Starts `argv[0]` (an absolute path; no PATH search, no shell) with `argv` and `envp`, with
/// every signal at its default disposition and none blocked (the daemon ignores SIGTERM and
/// friends, which exec would otherwise pass on), stdin from /dev/null, stdout and stderr the
/// daemon's, and no other descriptor of the daemon; under a keeper: a process of its own
/// (`*pid`, leading a process group of its own) that is a child subreaper, so that everything the program starts stays its
/// descendant even after `setsid` or a double fork. SIGTERM to the keeper sends SIGTERM to all
/// of it, then SIGKILL after `grace_ms`; the keeper ends once the program and everything it
/// started have, with the program's exit status (or its signal). The keeper gets SIGTERM when
/// the calling process dies, and holds none of its descriptors beyond 0–2. 0 with *pid set, or
/// an errno value (the exec's, when the program cannot be started).
int CLoopixSys_spawnKept(char *const argv[], char *const envp[], int grace_ms, pid_t *pid);

#endif

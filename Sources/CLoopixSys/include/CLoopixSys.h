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

/// Starts `argv[0]` (an absolute path; no PATH search, no shell) with `argv` and `envp` in a
/// process group of its own (so a time limit can stop it and its children), with every signal
/// at its default disposition and none blocked (the daemon ignores SIGTERM and friends, which
/// exec would otherwise pass on), stdin from /dev/null, stdout and stderr the daemon's, and no
/// other descriptor of the daemon. 0 with *pid set, or an errno value (posix_spawn's convention).
int CLoopixSys_spawn(char *const argv[], char *const envp[], pid_t *pid);

#endif

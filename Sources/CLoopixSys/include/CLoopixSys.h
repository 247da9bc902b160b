#ifndef CLOOPIXSYS_H
#define CLOOPIXSYS_H
/// Linux calls that Swift's Glibc module does not import. Every symbol carries the
/// `CLoopixSys_` prefix. Each returns 0 or -1 with errno set, like the call it wraps.

/// renameat2(2) with RENAME_NOREPLACE: moves `from` to `to` only if `to` does not exist
/// (EEXIST otherwise). EINVAL or ENOSYS mean the filesystem or kernel lacks the flag.
int CLoopixSys_renameNoReplace(int fromDirFD, const char *from, int toDirFD, const char *to);

/// Names the calling thread (at most 15 bytes show in ps/top): prctl(PR_SET_NAME).
void CLoopixSys_setThreadName(const char *name);

#endif

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CLoopixSys.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int CLoopixSys_renameNoReplace(int fromDirFD, const char *from, int toDirFD, const char *to) {
    // Through syscall(2) so that it works with C libraries older than glibc 2.28 as well.
    return (int)syscall(SYS_renameat2, fromDirFD, from, toDirFD, to, RENAME_NOREPLACE);
}

#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include "CLoopixSys.h"

// --- The keeper (CLoopixSys_spawnKept) ---------------------------------------------------------
// Everything from here runs in a child of a multithreaded process between fork() and exit, so it
// uses only async-signal-safe calls: no malloc, no stdio, no locks.

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TREE = 1024 };

/// The parent pid in /proc/<pid>/stat ("pid (comm) state ppid …"; comm may hold anything,
/// so the fields are read after its last ')'); -1 when it cannot be read.
static pid_t parent_of(const char *pid_name) {
    char path[64] = "/proc/";
    size_t n = 6;
    for (const char *p = pid_name; *p && n < sizeof path - 8; p++) path[n++] = *p;
    const char *tail = "/stat";
    for (const char *p = tail; *p; p++) path[n++] = *p;
    path[n] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[512];
    ssize_t got = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (got <= 0) return -1;
    buffer[got] = 0;
    char *close_paren = NULL;
    for (char *p = buffer; *p; p++) if (*p == ')') close_paren = p;
    if (!close_paren || close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ') return -1;
    pid_t ppid = 0;
    for (char *p = close_paren + 4; *p >= '0' && *p <= '9'; p++) ppid = ppid * 10 + (*p - '0');
    return ppid;
}

/// Every process descended from this one, found by walking /proc until no more turn up.
static int descendants(pid_t *tree, int max) {
    int count = 0;
    pid_t self = getpid();
    for (int pass = 0; pass < 16; pass++) {
        int before = count;
        int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) return count;
        char entries[4096];
        long got;
        while ((got = syscall(SYS_getdents64, dir, entries, sizeof entries)) > 0) {
            for (long offset = 0; offset < got;) {
                struct dirent64 *e = (struct dirent64 *)(entries + offset);
                offset += e->d_reclen;
                if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
                pid_t pid = 0;
                for (const char *p = e->d_name; *p >= '0' && *p <= '9'; p++) pid = pid * 10 + (*p - '0');
                int known = pid == self;
                for (int i = 0; i < count && !known; i++) known = tree[i] == pid;
                if (known) continue;
                pid_t ppid = parent_of(e->d_name);
                int ours = ppid == self;
                for (int i = 0; i < count && !ours; i++) ours = tree[i] == ppid;
                if (ours && count < max) tree[count++] = pid;
            }
        }
        close(dir);
        if (count == before) break;
    }
    return count;
}

static void signal_tree(int sig) {
    pid_t tree[MAX_TREE];
    int n = descendants(tree, MAX_TREE);
    for (int i = 0; i < n; i++) kill(tree[i], sig);
}

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void close_range_of(unsigned first, unsigned last) {
    if (syscall(SYS_close_range, first, last, 0) == 0) return;
    unsigned end = last > 65535 ? 65535 : last;  // no close_range (a kernel before 5.9): one at a time
    for (unsigned fd = first; fd <= end; fd++) close((int)fd);
}

/// Closes every descriptor from 3 up except `keep`.
static void close_others(int keep) {
    if (keep > 3) close_range_of(3, (unsigned)keep - 1);
    close_range_of((unsigned)keep + 1, ~0u);
}

static void report(int fd, int e) {
    ssize_t ignored = write(fd, &e, sizeof e);
    (void)ignored;
}

static void keep(char *const argv[], char *const envp[], int report_fd, pid_t daemon, int grace_ms) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // the daemon killed outright: end the hook all the same
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (getppid() != daemon) _exit(127);  // the daemon died before PDEATHSIG was set
    setpgid(0, 0);
    close_others(report_fd);
    pid_t hook = fork();
    if (hook < 0) {
        report(report_fd, errno);
        _exit(127);
    }
    if (hook == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < 65; s++) sigaction(s, &dfl, NULL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != 0) {
            dup2(null, 0);
            close(null);
        }
        execve(argv[0], argv, envp);
        report(report_fd, errno);
        _exit(127);
    }
    close(report_fd);

    int status = 0, hook_done = 0, stopping = 0;
    uint64_t kill_at = 0;
    for (;;) {
        struct timespec tick = {0, 100 * 1000 * 1000};
        siginfo_t info;
        int sig = sigtimedwait(&all, &info, &tick);
        if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && !stopping) {
            stopping = 1;
            kill_at = now_ms() + (uint64_t)grace_ms;
            signal_tree(SIGTERM);
        }
        if (stopping && now_ms() >= kill_at) signal_tree(SIGKILL);  // again each round: orphans reparent to us
        pid_t p;
        int st;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
            if (p == hook) {
                status = st;
                hook_done = 1;
            }
        }
        if (p < 0 && errno == ECHILD) break;  // the hook and everything it started are gone
    }
    if (!hook_done || WIFEXITED(status)) _exit(hook_done ? WEXITSTATUS(status) : 127);
    // Killed by a signal: end the same way, so the daemon reads the same status.
    int s = WTERMSIG(status);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(s, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, s);
    kill(getpid(), s);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    _exit(128 + s);
}

int CLoopixSys_spawnKept(char *const argv[], char *const envp[], int grace_ms, pid_t *pid) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return errno;
    pid_t daemon = getpid();
    pid_t child = fork();
    if (child < 0) {
        int e = errno;
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return e;
    }
    if (child == 0) {
        close(pipe_fds[0]);
        keep(argv, envp, pipe_fds[1], daemon, grace_ms);
        _exit(127);
    }
    close(pipe_fds[1]);
    // The hook's exec closes the pipe (O_CLOEXEC): nothing to read means it started.
    int e = 0;
    ssize_t got;
    do got = read(pipe_fds[0], &e, sizeof e); while (got < 0 && errno == EINTR);
    close(pipe_fds[0]);
    *pid = child;
    if (got == (ssize_t)sizeof e && e != 0) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return e;
    }
    return 0;
}

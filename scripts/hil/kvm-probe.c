// The init of the KVM probe VM (scripts/hil/lib.sh, hil_kvm_probe): the bench kernel boots under
// KVM with this as its only program, and it runs guest code of the kind that stopped real bench
// guests under nested KVM ("KVM internal error. Suberror: 1", an emulation failure on
// `lock cmpxchg16b`): 16-byte compare-and-swaps on a static object, on each page of a fresh mapping
// (touched first by one) and by two threads contending for one counter. It prints
// "loopix-kvm-probe: ok" when every result is right and powers the VM off.
//
// No libc (cc -static -nostdlib): a bare binary the kernel can start from a tiny initramfs.
// Run anywhere but as PID 1 it only does the checks and exits (0 when they pass) — it never
// powers a machine off unless it is a VM's init.
#include <stdint.h>

#define SYS_write 1
#define SYS_mmap 9
#define SYS_getpid 39
#define SYS_clone 56
#define SYS_exit 60
#define SYS_reboot 169
#define SYS_exit_group 231

static long sys3(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

static void say(const char *s) {
    long n = 0;
    while (s[n]) n++;
    sys3(SYS_write, 1, (long)s, n);
}

typedef struct { uint64_t lo, hi; } __attribute__((aligned(16))) Pair;

// `lock cmpxchg16b`: if *p == *expected, stores desired and returns 1; otherwise loads *p into
// *expected and returns 0.
static int cas16(volatile Pair *p, Pair *expected, Pair desired) {
    uint8_t ok;
    __asm__ volatile("lock cmpxchg16b %1\n\tsetz %0"
                     : "=q"(ok), "+m"(*p), "+a"(expected->lo), "+d"(expected->hi)
                     : "b"(desired.lo), "c"(desired.hi)
                     : "memory", "cc");
    return ok;
}

static Pair word;
static int failed;

// Two threads adding to one 16-byte counter through compare-and-swap loops (the VM has two
// CPUs, so the locked swaps really contend).
enum { adds = 100000 };
static volatile Pair *shared;
static volatile int helper_done;
static char helper_stack[65536] __attribute__((aligned(16)));

static void add_many(void) {
    for (int i = 0; i < adds; i++) {
        Pair seen = { shared->lo, shared->hi };
        while (!cas16(shared, &seen, (Pair){ seen.lo + 1, seen.hi + 2 })) {}
    }
}

void helper_main(void) {
    add_many();
    helper_done = 1;
}

// Starts helper_main on helper_stack as a thread of this process (clone, no libc); returns the
// new thread's id or a negative errno.
long start_helper(void (*fn)(void), char *stack_top);
__asm__(".globl start_helper\n"
        "start_helper:\n"
        "  mov %rdi, -8(%rsi)\n"       // the function, popped by the new thread
        "  sub $8, %rsi\n"
        "  mov $0x50f00, %edi\n"       // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM
        "  xor %edx, %edx\n"
        "  xor %r10d, %r10d\n"
        "  xor %r8d, %r8d\n"
        "  mov $56, %eax\n"            // SYS_clone
        "  syscall\n"
        "  test %rax, %rax\n"
        "  jnz 1f\n"
        "  pop %rax\n"                 // the new thread: its own stack, 16-byte aligned here
        "  call *%rax\n"
        "  mov $60, %eax\n"            // SYS_exit: this thread only
        "  xor %edi, %edi\n"
        "  syscall\n"
        "1: ret\n");

static void check(int ok, const char *what) {
    if (!ok) {
        say("loopix-kvm-probe: FAILED: ");
        say(what);
        say("\n");
        failed = 1;
    }
}

void probe_main(void) {
    // 1. A static object: swaps that must succeed, and one that must fail and report the value.
    for (uint64_t i = 0; i < 1000; i++) {
        Pair expect = { i, ~i };
        if (i == 0) expect = (Pair){ 0, 0 };
        if (!cas16(&word, &expect, (Pair){ i + 1, ~(i + 1) })) {
            check(0, "cmpxchg16b did not swap a matching value");
            break;
        }
    }
    Pair stale = { 7, 7 };
    check(!cas16(&word, &stale, (Pair){ 0, 0 }), "cmpxchg16b swapped a value that did not match");
    check(stale.lo == 1000 && stale.hi == ~(uint64_t)1000, "cmpxchg16b reported a wrong current value");

    // 2. A fresh anonymous mapping whose every page is first touched by a locked 16-byte swap
    //    (the page fault and its retry are where an emulator gets involved).
    enum { pages = 64, page = 4096 };
    long m = sys6(SYS_mmap, 0, pages * page, 3 /* PROT_READ|PROT_WRITE */,
                  0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
    check(m > 0 || m < -4095, "mmap failed");
    if (m > 0 || m < -4095) {
        for (uint64_t i = 0; i < pages; i++) {
            volatile Pair *p = (volatile Pair *)(m + (long)(i * page) + page - 16);
            Pair zero = { 0, 0 };
            check(cas16(p, &zero, (Pair){ i, i ^ 0x5a5a }), "cmpxchg16b on a fresh page did not swap");
        }
        for (uint64_t i = 0; i < pages; i++) {
            volatile Pair *p = (volatile Pair *)(m + (long)(i * page) + page - 16);
            check(p->lo == i && p->hi == (i ^ 0x5a5a), "a fresh page lost its swapped value");
        }

        // 3. Contention: this thread and a helper each add `adds` times to one counter.
        shared = (volatile Pair *)(m + 64);
        long tid = start_helper(helper_main, helper_stack + sizeof helper_stack);
        check(tid > 0, "clone failed");
        if (tid > 0) {
            add_many();
            while (!helper_done) __asm__ volatile("pause");
            check(shared->lo == 2 * adds && shared->hi == 4 * adds, "contended cmpxchg16b lost an update");
        }
    }

    if (failed) {
        say("loopix-kvm-probe: failed\n");
    } else {
        say("loopix-kvm-probe: ok\n");
    }
    if (sys3(SYS_getpid, 0, 0, 0) == 1) {
        // The VM's init: power off (-no-reboot turns a restart into qemu's exit as well).
        sys6(SYS_reboot, 0xfee1dead, 672274793, 0x4321fedc /* POWER_OFF */, 0, 0, 0);
        sys6(SYS_reboot, 0xfee1dead, 672274793, 0x01234567 /* RESTART */, 0, 0, 0);
    }
    sys3(SYS_exit_group, failed, 0, 0);
    for (;;) {}
}

// The entry point: the stack as the kernel left it, aligned for a C call.
__asm__(".globl _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  and $-16, %rsp\n"
        "  call probe_main\n"
        "  hlt\n");

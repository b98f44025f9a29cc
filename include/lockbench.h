/*
 * lockbench.h — the C plug-in ABI of lockbench, version 1.
 *
 * A plug-in is a shared object that exports one function, `lockbench_plugin`, returning a
 * descriptor of its lock: the ABI version it was built for, its name, the problem it solves
 * (mutual exclusion, group mutual exclusion or k-exclusion), the properties it claims, and
 * four functions: init, enter, exit, destroy. `lockbench run --lock plugin:PATH` loads it
 * (once per process) and times, checks and reports it as any built-in lock; see docs/plugins.md.
 *
 * Room to grow: both structs start with their size. lockbench reads a descriptor only up to the
 * size it declares, and a plug-in reads a parameter block only up to the size lockbench passes;
 * fields are only ever appended. A change that cannot be made by appending bumps
 * LOCKBENCH_ABI_VERSION, and lockbench refuses a descriptor of a version it does not read.
 *
 * Threads: processes are numbered 0..n-1; a process id is used by one thread at a time, and
 * exit(lock, p, s) follows enter(lock, p, s) on the same thread. enter and exit are called
 * concurrently from n threads; init and destroy are not.
 */
#ifndef LOCKBENCH_H
#define LOCKBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's ABI; a descriptor carries the version it was built against. */
#define LOCKBENCH_ABI_VERSION 1u

/* The problem a lock solves (the descriptor's `problem`). */
enum lockbench_problem {
    /* At most one process inside; `session` is ignored. */
    LOCKBENCH_MUTEX = 1,
    /* Processes inside together all asked for the same session. */
    LOCKBENCH_GME = 2,
    /* At most k processes inside (`k` of the parameters); `session` is ignored. */
    LOCKBENCH_KEXCLUSION = 3,
};

/* Claimed properties (the descriptor's `claims`, OR-ed together). An unknown bit is refused. */
/* First-come-first-served between conflicting requests (P5). */
#define LOCKBENCH_CLAIM_FCFS (1u << 0)
/* Bounded registers. */
#define LOCKBENCH_CLAIM_BOUNDED (1u << 1)
/* Not a lock: a negative control or a calibration entry. lockbench leaves it out of `all` and
 * expects the oracle to flag it. */
#define LOCKBENCH_CLAIM_NOT_A_LOCK (1u << 2)
/* Every bit this version knows. */
#define LOCKBENCH_CLAIMS_V1 (LOCKBENCH_CLAIM_FCFS | LOCKBENCH_CLAIM_BOUNDED | LOCKBENCH_CLAIM_NOT_A_LOCK)

/* What a lock is built for, passed to init. Read it during init only: lockbench may reuse it. */
struct lockbench_params {
    /* sizeof(struct lockbench_params) as lockbench was built: read no field at or past it. */
    uint32_t size;
    /* How waiting processes wait: 0 = spin forever (every thread has its own core); otherwise
     * spin this many times, then yield the CPU between tries (threads outnumber cores). */
    uint32_t spins;
    /* Processes (ids 0..n-1). */
    size_t n;
    /* Capacity of a k-exclusion lock (ignored by the other problems). */
    size_t k;
    /* Non-zero once lockbench gives a stalled run up. Valid until destroy. A process waiting in
     * enter may then return non-zero without entering; lockbench stops that thread. */
    const volatile unsigned char *abort;
};

/* The descriptor `lockbench_plugin` returns; static storage, valid while the object is loaded. */
struct lockbench_plugin {
    /* LOCKBENCH_ABI_VERSION. */
    uint32_t abi_version;
    /* sizeof(struct lockbench_plugin). */
    uint32_t size;
    /* Name in results and tables: letters, digits, '-', '_' or '.'; not a built-in lock's. */
    const char *name;
    /* An enum lockbench_problem. */
    uint32_t problem;
    /* LOCKBENCH_CLAIM_* bits. */
    uint32_t claims;
    /* Where the algorithm comes from (paper and figure, or a project), one line; may be NULL. */
    const char *source;
    /* One line of further explanation; may be NULL. */
    const char *notes;
    /* Builds a lock for params->n processes; stores it in *lock and returns 0, or writes a one-line
     * reason (NUL-terminated, at most error_len bytes) into error and returns non-zero. */
    int (*init)(const struct lockbench_params *params, void **lock, char *error, size_t error_len);
    /* Process p enters asking for session; returns 0 once inside, non-zero only when it gave up
     * because *params->abort became non-zero. */
    int (*enter)(void *lock, size_t p, size_t session);
    /* Process p leaves the critical section it entered with session. */
    void (*exit)(void *lock, size_t p, size_t session);
    /* Frees what init built. */
    void (*destroy)(void *lock);
};

/* The one symbol a plug-in exports. */
const struct lockbench_plugin *lockbench_plugin(void);

/* A wait step for plug-ins' spin loops, following params->spins (`tries` starts at 0). Returns
 * non-zero when the run was given up (check *abort every 1024 tries, off the fast path). */
static inline int lockbench_wait(uint32_t spins, const volatile unsigned char *abort,
                                 uint32_t *tries)
{
    *tries += 1;
    if (spins != 0 && *tries > spins) {
        sched_yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
    return (*tries & 1023u) == 0 && abort != NULL && *abort != 0;
}

#ifdef __cplusplus
}
#endif

#endif /* LOCKBENCH_H */

/*
 * c-ticket: the classic ticket lock as a lockbench plug-in, written as the built-in `ticket`
 * (src/locks/baseline/ticket.rs) is: a fetch-and-add doorway, a wait on `serving`, an exit that
 * is a release store; `next` and `serving` on separate cache lines. `lockbench fidelity
 * --boundary` runs the two side by side: the difference is what the plug-in boundary costs.
 *
 * Build: scripts/build-c-examples.sh (-> target/c-examples/libticket.so).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>

#include "lockbench.h"

#define LINE 128

struct ticket {
    _Alignas(LINE) atomic_long next;
    _Alignas(LINE) atomic_long serving;
    _Alignas(LINE) uint32_t spins;
    const volatile unsigned char *abort;
};

static int ticket_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    struct ticket *l = aligned_alloc(LINE, sizeof *l);
    if (l == NULL) {
        snprintf(error, len, "out of memory");
        return 1;
    }
    atomic_init(&l->next, 0);
    atomic_init(&l->serving, 0);
    l->spins = params->spins;
    l->abort = params->abort;
    *out = l;
    return 0;
}

static int ticket_enter(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    struct ticket *l = lock;
    /* SeqCst, as the built-in's register access: a full barrier on its own. */
    long mine = atomic_fetch_add(&l->next, 1);
    if (atomic_load(&l->serving) == mine)
        return 0;
    uint32_t tries = 0;
    while (atomic_load(&l->serving) != mine)
        if (lockbench_wait(l->spins, l->abort, &tries))
            return 1;
    return 0;
}

static void ticket_exit(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    struct ticket *l = lock;
    /* Only the holder writes `serving`: a read and a release store hand the lock on. */
    long served = atomic_load_explicit(&l->serving, memory_order_relaxed);
    atomic_store_explicit(&l->serving, served + 1, memory_order_release);
}

static void ticket_destroy(void *lock)
{
    free(lock);
}

static const struct lockbench_plugin descriptor = {
    .abi_version = LOCKBENCH_ABI_VERSION,
    .size = sizeof(struct lockbench_plugin),
    .name = "c-ticket",
    .problem = LOCKBENCH_MUTEX,
    .claims = LOCKBENCH_CLAIM_FCFS | LOCKBENCH_CLAIM_BOUNDED,
    .source = "baseline (C plug-in)",
    .notes = "ticket lock in C11 atomics, the twin of the built-in `ticket`",
    .init = ticket_init,
    .enter = ticket_enter,
    .exit = ticket_exit,
    .destroy = ticket_destroy,
};

const struct lockbench_plugin *lockbench_plugin(void)
{
    return &descriptor;
}

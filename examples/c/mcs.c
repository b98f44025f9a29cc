/*
 * c-mcs: the MCS queue lock (Mellor-Crummey and Scott, "Algorithms for scalable synchronization
 * on shared-memory multiprocessors", ACM TOCS 9(1), 1991, Figure 5) as a lockbench plug-in, in C11
 * atomics. Each process spins on the flag of its own queue node; FCFS from the swap on the tail.
 *
 * Build: scripts/build-c-examples.sh (-> target/c-examples/libmcs.so).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lockbench.h"

#define LINE 128

struct node {
    _Alignas(LINE) _Atomic(struct node *) next;
    atomic_bool locked;
};

struct mcs {
    _Alignas(LINE) _Atomic(struct node *) tail;
    _Alignas(LINE) struct node *nodes; /* one per process */
    uint32_t spins;
    const volatile unsigned char *abort;
};

static int mcs_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    struct mcs *l = aligned_alloc(LINE, sizeof *l);
    struct node *nodes = aligned_alloc(LINE, params->n * sizeof *nodes);
    if (l == NULL || nodes == NULL) {
        free(l);
        free(nodes);
        snprintf(error, len, "out of memory for %zu queue nodes", params->n);
        return 1;
    }
    atomic_init(&l->tail, NULL);
    for (size_t i = 0; i < params->n; i++) {
        atomic_init(&nodes[i].next, NULL);
        atomic_init(&nodes[i].locked, false);
    }
    l->nodes = nodes;
    l->spins = params->spins;
    l->abort = params->abort;
    *out = l;
    return 0;
}

static int mcs_enter(void *lock, size_t p, size_t session)
{
    (void)session;
    struct mcs *l = lock;
    struct node *me = &l->nodes[p];
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->locked, true, memory_order_relaxed);
    /* Acq-rel: publishes our node's fields to the successor, and sees the predecessor's. */
    struct node *pred = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);
    if (pred == NULL)
        return 0;
    atomic_store_explicit(&pred->next, me, memory_order_release);
    uint32_t tries = 0;
    while (atomic_load_explicit(&me->locked, memory_order_acquire))
        if (lockbench_wait(l->spins, l->abort, &tries))
            return 1;
    return 0;
}

static void mcs_exit(void *lock, size_t p, size_t session)
{
    (void)session;
    struct mcs *l = lock;
    struct node *me = &l->nodes[p];
    struct node *next = atomic_load_explicit(&me->next, memory_order_acquire);
    if (next == NULL) {
        struct node *expected = me;
        if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL,
                                                    memory_order_release, memory_order_relaxed))
            return;
        /* A successor swapped the tail and is about to link itself: a bounded wait. */
        uint32_t tries = 0;
        while ((next = atomic_load_explicit(&me->next, memory_order_acquire)) == NULL)
            (void)lockbench_wait(l->spins, NULL, &tries);
    }
    atomic_store_explicit(&next->locked, false, memory_order_release);
}

static void mcs_destroy(void *lock)
{
    struct mcs *l = lock;
    free(l->nodes);
    free(l);
}

static const struct lockbench_plugin descriptor = {
    .abi_version = LOCKBENCH_ABI_VERSION,
    .size = sizeof(struct lockbench_plugin),
    .name = "c-mcs",
    .problem = LOCKBENCH_MUTEX,
    .claims = LOCKBENCH_CLAIM_FCFS | LOCKBENCH_CLAIM_BOUNDED,
    .source = "Mellor-Crummey & Scott, ACM TOCS 1991, Fig. 5 (C plug-in)",
    .notes = "MCS queue lock in C11 atomics: each process spins on its own node",
    .init = mcs_init,
    .enter = mcs_enter,
    .exit = mcs_exit,
    .destroy = mcs_destroy,
};

const struct lockbench_plugin *lockbench_plugin(void)
{
    return &descriptor;
}

/*
 * c-broken-tas: a DELIBERATELY BROKEN test-and-set lock, the negative control of the plug-in
 * path. Its test and its set are two separate steps (a load, then a store), so two processes
 * can both see the lock free and both enter. lockbench's oracle must catch it (`run` exits 1
 * and names the violation).
 *
 * Build: scripts/build-c-examples.sh (-> target/c-examples/libbroken_tas.so).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>

#include "lockbench.h"

struct broken {
    _Alignas(128) atomic_int held;
    uint32_t spins;
    const volatile unsigned char *abort;
};

static int broken_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    struct broken *l = aligned_alloc(128, sizeof *l);
    if (l == NULL) {
        snprintf(error, len, "out of memory");
        return 1;
    }
    atomic_init(&l->held, 0);
    l->spins = params->spins;
    l->abort = params->abort;
    *out = l;
    return 0;
}

static int broken_enter(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    struct broken *l = lock;
    uint32_t tries = 0;
    /* The bug: test, then set, with a window between them. */
    while (atomic_load(&l->held) != 0)
        if (lockbench_wait(l->spins, l->abort, &tries))
            return 1;
    for (volatile int i = 0; i < 16; i++) {
        /* widen the window, so that the control fails quickly */
    }
    atomic_store(&l->held, 1);
    return 0;
}

static void broken_exit(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    struct broken *l = lock;
    atomic_store(&l->held, 0);
}

static void broken_destroy(void *lock)
{
    free(lock);
}

static const struct lockbench_plugin descriptor = {
    .abi_version = LOCKBENCH_ABI_VERSION,
    .size = sizeof(struct lockbench_plugin),
    .name = "c-broken-tas",
    .problem = LOCKBENCH_MUTEX,
    .claims = LOCKBENCH_CLAIM_NOT_A_LOCK,
    .source = "negative control (C plug-in)",
    .notes = "deliberately broken: test and set are separate steps, two processes can enter",
    .init = broken_init,
    .enter = broken_enter,
    .exit = broken_exit,
    .destroy = broken_destroy,
};

const struct lockbench_plugin *lockbench_plugin(void)
{
    return &descriptor;
}

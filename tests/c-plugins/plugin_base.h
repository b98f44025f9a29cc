/* What the bad plug-ins of tests/plugin.rs share: a working lock (a test-and-set) and a macro
 * that exports its descriptor with one field wrong per plug-in. */
#include <stdatomic.h>
#include <stdlib.h>

#include "lockbench.h"

static atomic_int held;

__attribute__((unused)) static int base_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    (void)params;
    (void)error;
    (void)len;
    *out = &held;
    return 0;
}

__attribute__((unused)) static int base_enter(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    while (atomic_exchange((atomic_int *)lock, 1) != 0) {
    }
    return 0;
}

__attribute__((unused)) static void base_exit(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    atomic_store((atomic_int *)lock, 0);
}

static void base_destroy(void *lock)
{
    (void)lock;
}

#define EXPORT_DESCRIPTOR(VERSION, NAME, PROBLEM, INIT)                                         \
    static const struct lockbench_plugin descriptor = {                                          \
        .abi_version = (VERSION),                                                                \
        .size = sizeof(struct lockbench_plugin),                                                 \
        .name = (NAME),                                                                          \
        .problem = (PROBLEM),                                                                    \
        .claims = 0,                                                                             \
        .source = "tests/c-plugins",                                                             \
        .notes = "a plug-in with one fault, for tests/plugin.rs",                                \
        .init = (INIT),                                                                          \
        .enter = base_enter,                                                                     \
        .exit = base_exit,                                                                       \
        .destroy = base_destroy,                                                                 \
    };                                                                                           \
    const struct lockbench_plugin *lockbench_plugin(void)                                        \
    {                                                                                            \
        return &descriptor;                                                                      \
    }

/*
 * c-noop: admits everyone at once. Not a lock: beside the built-in `noop`, `lockbench fidelity
 * --boundary` measures the pure cost of calling a plug-in's enter and exit.
 *
 * Build: scripts/build-c-examples.sh (-> target/c-examples/libnoop.so).
 */
#include "lockbench.h"

static int noop_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    (void)params;
    (void)error;
    (void)len;
    static char token;
    *out = &token;
    return 0;
}

static int noop_enter(void *lock, size_t p, size_t session)
{
    (void)lock;
    (void)p;
    (void)session;
    return 0;
}

static void noop_exit(void *lock, size_t p, size_t session)
{
    (void)lock;
    (void)p;
    (void)session;
}

static void noop_destroy(void *lock)
{
    (void)lock;
}

static const struct lockbench_plugin descriptor = {
    .abi_version = LOCKBENCH_ABI_VERSION,
    .size = sizeof(struct lockbench_plugin),
    .name = "c-noop",
    .problem = LOCKBENCH_MUTEX,
    .claims = LOCKBENCH_CLAIM_NOT_A_LOCK,
    .source = "calibration (C plug-in)",
    .notes = "calibration, not a lock: admits everyone; the plug-in boundary's pure call cost",
    .init = noop_init,
    .enter = noop_enter,
    .exit = noop_exit,
    .destroy = noop_destroy,
};

const struct lockbench_plugin *lockbench_plugin(void)
{
    return &descriptor;
}

/* A lock that crashes inside enter once it is built for more than one process (a SIGSEGV, as a
 * wild pointer in a user's lock would): at one thread it works. The sweep test uses it to show
 * that every point finished before the crash is kept. */
#include <stdio.h>

#include "plugin_base.h"

static size_t processes;

static int crash_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    processes = params->n;
    return base_init(params, out, error, len);
}

static int crash_enter(void *lock, size_t p, size_t session)
{
    if (processes > 1) {
        volatile int *wild = NULL;
        *wild = 1;
    }
    return base_enter(lock, p, session);
}

#define base_enter crash_enter
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "c-crash", LOCKBENCH_MUTEX, crash_init)

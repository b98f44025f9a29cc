/* A lock whose exit forgets to release it: the second entry waits for ever, honouring the
 * abort flag as include/lockbench.h asks. The watchdog must stop the run and report it stalled. */
#include <stdatomic.h>

#include "plugin_base.h"

struct stuck {
    atomic_int held;
    const volatile unsigned char *abort;
    uint32_t spins;
};

static struct stuck the_lock;

static int stuck_init(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    (void)error;
    (void)len;
    atomic_init(&the_lock.held, 0);
    the_lock.abort = params->abort;
    the_lock.spins = params->spins;
    *out = &the_lock;
    return 0;
}

static int stuck_enter(void *lock, size_t p, size_t session)
{
    (void)p;
    (void)session;
    struct stuck *l = lock;
    uint32_t tries = 0;
    while (atomic_exchange(&l->held, 1) != 0)
        if (lockbench_wait(l->spins, l->abort, &tries))
            return 1;
    return 0;
}

static void stuck_exit(void *lock, size_t p, size_t session)
{
    (void)lock;
    (void)p;
    (void)session;
}

#define base_enter stuck_enter
#define base_exit stuck_exit
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "c-stuck", LOCKBENCH_MUTEX, stuck_init)

/* An init that always refuses, with its reason. */
#include <stdio.h>

#include "plugin_base.h"

static int refuse(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    (void)out;
    snprintf(error, len, "this lock needs a NUMA node per process, and %zu were asked for", params->n);
    return 3;
}

EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "bad-init", LOCKBENCH_MUTEX, refuse)

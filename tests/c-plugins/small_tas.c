/* A correct test-and-set lock that refuses more than 2 processes (init's error at run time)
 * and names itself c-small-tas; sweep tests use it. */
#include <stdio.h>

#include "plugin_base.h"

static int at_most_two(const struct lockbench_params *params, void **out, char *error, size_t len)
{
    if (params->n > 2) {
        snprintf(error, len, "at most 2 processes, not %zu", params->n);
        return 1;
    }
    return base_init(params, out, error, len);
}

EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "c-small-tas", LOCKBENCH_MUTEX, at_most_two)

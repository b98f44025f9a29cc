/* A problem kind the ABI does not define. */
#include "plugin_base.h"
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "bad-problem", 7u, base_init)

/* Named as a built-in lock. */
#include "plugin_base.h"
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "ticket", LOCKBENCH_MUTEX, base_init)

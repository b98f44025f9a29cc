/* Built for an ABI version this lockbench does not read. */
#include "plugin_base.h"
EXPORT_DESCRIPTOR(99u, "bad-version", LOCKBENCH_MUTEX, base_init)

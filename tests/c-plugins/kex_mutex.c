/* A test-and-set lock declared as a k-exclusion lock: a mutex keeps at most k >= 1 inside. */
#include "plugin_base.h"
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "c-kex-mutex", LOCKBENCH_KEXCLUSION, base_init)

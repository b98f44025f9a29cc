/* A test-and-set lock declared as a GME lock: a mutex is a (trivially safe) GME lock, so the
 * tests see the problem kind reach the oracle and the results. */
#include "plugin_base.h"
EXPORT_DESCRIPTOR(LOCKBENCH_ABI_VERSION, "c-gme-mutex", LOCKBENCH_GME, base_init)

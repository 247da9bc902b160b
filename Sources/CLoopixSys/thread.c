#include <sys/prctl.h>
#include "CLoopixSys.h"

void CLoopixSys_setThreadName(const char *name) {
    // PR_SET_NAME truncates to 15 bytes itself; a failure only loses the name.
    (void)prctl(PR_SET_NAME, name, 0, 0, 0);
}

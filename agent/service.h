/*
 * service.h: long-running programs a step needs next to its workload
 * (redis-server, memcached): started once before the first iteration in
 * their own process group with the step's bind/aslr, waited for by
 * connecting to their TCP port, watched between iterations, and killed
 * (whole group) at the end of the step, also from a fatal signal.
 */
#ifndef BF_AGENT_SERVICE_H
#define BF_AGENT_SERVICE_H

#include "err.h"
#include "step.h"

/* Start every service of st and wait until each accepts a connection. A
 * service that exits or does not become ready in time fails the step with
 * d saying which, its exit status and the tail of its output. */
int service_start_all(const struct step *st, struct bf_diag *d);
/* Is every service still running? BF_ERR_STATE with d when one died. */
int service_check(const struct step *st, struct bf_diag *d);
/* Kill every service's group and reap it, the leader's orphaned children
 * too (we are their subreaper): when it returns, the services' ports and
 * memory are free. */
void service_stop_all(void);
/* Kill every service's group from a signal handler. */
void service_kill_signal(void);

#endif

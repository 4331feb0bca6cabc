/*
 * knobset.h: applying a step's knobs, reading them back, and putting the
 * machine back as it was. Every file is recorded (path, previous value)
 * before it is written, in a static undo list that the fatal-signal
 * handler can replay too, so a knob never outlives its step.
 */
#ifndef BF_AGENT_KNOBSET_H
#define BF_AGENT_KNOBSET_H

#include <stddef.h>

#include "err.h"
#include "step.h"

/*
 * Read every knob, set those that differ, read every one back and print
 * {"type":"knobs","before":{},"requested":{},"after":{}}. A knob the machine
 * lacks, a write the kernel refuses, or a read-back that differs from the
 * request fails with d naming the knob, the value and the reason (a hugetlb
 * pool short of the request: the pages asked and obtained). A knob in
 * knobs_optional that the machine lacks is marked absent in st and reads
 * "absent" in before and after. Whatever was written is in the undo list
 * either way.
 */
int knobset_apply(struct step *st, struct bf_diag *d);
/* Put back every file written, newest first. 0, or BF_ERR_SYS with d. */
int knobset_restore(struct bf_diag *d);
/* The same from a signal handler: no allocation, no stdio. */
void knobset_restore_signal(void);
/* The step's actions before an iteration: sync(2) and drop_caches (1..3)
 * when asked, then compact_memory when asked. */
int knobset_actions(const struct step *st, struct bf_diag *d);

#endif

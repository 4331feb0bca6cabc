/*
 * work.h: built-in workloads (`benchfleet-agent work NAME ...`), so a fleet
 * can run real measured work before any package is installed.
 */
#ifndef BF_AGENT_WORK_H
#define BF_AGENT_WORK_H

/* Exit status when the arguments are bad. */
#define WORK_EXIT_USAGE	2

/* argv[0] is the workload name. Returns the process exit status. */
int work_main(int argc, char **argv);

#endif

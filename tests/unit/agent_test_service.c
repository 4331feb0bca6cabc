/*
 * agent_test_service.c: a step's services, in process: after
 * service_stop_all() nothing of a service's process group is left, not even
 * a zombie, so its port and memory are free before the step's knobs are
 * restored and before the next step starts a server on the same port. The
 * service is a shell that leaves a child (as work serve leaves its
 * instances) and execs a listener.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec.h"
#include "service.h"
#include "step.h"
#include "t.h"

/* A loopback port nobody listens on (bound, then let go), or -1. */
static int
free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd, port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* Can we listen on port now (SO_REUSEADDR, as servers do)? */
static int
can_listen(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, one = 1, ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 1) == 0;
	close(fd);
	return ok;
}

static void
test_stop_reaps_group(void)
{
	char pidfile[] = "/tmp/bf-svc-test.XXXXXX", text[4096], got[64];
	struct bf_diag d = { 0 };
	struct step *st = NULL;
	long long leader = 0, child = 0;
	int port = free_port(), fd, r;
	FILE *f;

	T_CHECK(port > 0);
	if (port <= 0 || (fd = mkstemp(pidfile)) < 0) {
		T_CHECK(0);
		return;
	}
	close(fd);
	/* the leader records its pid (= the group) and its child's, then
	 * becomes the listener; the child outlives nothing but the group kill */
	snprintf(text, sizeof(text), "{\"run\":1,\"argv\":[\"true\"],\"iterations\":1,"
	    "\"timeout_s\":10,\"services\":[{\"argv\":[\"/bin/sh\",\"-c\",\"sleep 6183 & "
	    "echo $$ $! > %s; exec python3 -c 'import socket,time; s=socket.socket(); "
	    "s.bind((\\\"127.0.0.1\\\", %d)); s.listen(8); time.sleep(600)'\"],"
	    "\"ready\":{\"tcp\":\"127.0.0.1:%d\",\"timeout_s\":20}}]}", pidfile, port, port);
	r = step_parse(text, strlen(text), &st, &d);
	T_EQ_INT(r, 0);
	if (r != 0) {
		fprintf(stderr, "step_parse: %s\n", d.msg);
		goto out;
	}
	r = service_start_all(st, &d);
	T_EQ_INT(r, 0);
	if (r != 0) {
		fprintf(stderr, "service_start_all: %s\n", d.msg);
		service_stop_all();
		goto out;
	}
	if ((f = fopen(pidfile, "r")) != NULL) {
		if (fgets(got, sizeof(got), f) != NULL && sscanf(got, "%lld %lld", &leader, &child) != 2)
			leader = child = 0;
		fclose(f);
	}
	T_CHECK(leader > 1 && child > 1);
	T_CHECK(!can_listen(port));			/* the service holds it */
	T_EQ_INT(kill((pid_t)child, 0), 0);		/* the child runs */
	service_stop_all();
	/* nothing of the group, zombies included: all reaped */
	T_CHECK(leader > 1 && kill(-(pid_t)leader, 0) == -1 && errno == ESRCH);
	T_CHECK(child > 1 && kill((pid_t)child, 0) == -1 && errno == ESRCH);
	T_CHECK(can_listen(port));
out:
	step_free(st);
	bf_diag_clear(&d);
	unlink(pidfile);
}

int
main(void)
{
	/* as the agent does: the subreaper, and SIGCHLD to a self-pipe */
	T_OK(exec_signals_init());
	test_stop_reaps_group();
	return t_done();
}

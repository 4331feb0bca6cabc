/*
 * test_resolve.c: bf_resolve's answers that need no nameserver (tests
 * talk to loopback only): a name /etc/hosts has, addresses, a service
 * that is not a number under AI_NUMERICSERV, and the refusals of bad
 * arguments. Its deadline against a nameserver that never answers is
 * tested end to end: cli_http.sh (the CLI) and ssrf.sh (peer fetches).
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>

#include "err.h"
#include "resolve.h"
#include "t.h"

/* Does ai hold the IPv4 or IPv6 loopback on port? */
static int
has_loopback(const struct addrinfo *ai, int port)
{
	for (; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *s = (const void *)ai->ai_addr;

			if (s->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
			    ntohs(s->sin_port) == port)
				return 1;
		} else if (ai->ai_family == AF_INET6) {
			const struct sockaddr_in6 *s = (const void *)ai->ai_addr;

			if (memcmp(&s->sin6_addr, &in6addr_loopback, sizeof(in6addr_loopback)) == 0 &&
			    ntohs(s->sin6_port) == port)
				return 1;
		}
	}
	return 0;
}

int
main(void)
{
	struct addrinfo hints, *ai = NULL;
	char longhost[300];
	int gai = -1, i;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;

	/* /etc/hosts names localhost, so no nameserver is asked */
	T_EQ_INT(bf_resolve("localhost", "8080", &hints, 5000, &ai, &gai), 0);
	T_EQ_INT(gai, 0);
	T_CHECK(has_loopback(ai, 8080));
	freeaddrinfo(ai);
	ai = NULL;
	T_EQ_INT(bf_resolve("127.0.0.1", "22", NULL, 5000, &ai, NULL), 0);
	T_CHECK(ai != NULL && ai->ai_socktype == SOCK_STREAM && has_loopback(ai, 22));
	freeaddrinfo(ai);
	ai = NULL;
	T_EQ_INT(bf_resolve("::1", "443", &hints, 5000, &ai, &gai), 0);
	T_CHECK(has_loopback(ai, 443));
	freeaddrinfo(ai);
	ai = NULL;

	/* a service that is not a number: getaddrinfo's own error, kept */
	T_EQ_INT(bf_resolve("127.0.0.1", "http", &hints, 5000, &ai, &gai), BF_ERR_NOTFOUND);
	T_CHECK(gai != 0 && ai == NULL);

	/* arguments refused before any thread is started */
	memset(longhost, 'a', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	T_EQ_INT(bf_resolve(longhost, "80", &hints, 5000, &ai, &gai), BF_ERR_INVALID);
	T_EQ_INT(gai, 0);
	T_EQ_INT(bf_resolve("localhost", "12345678", &hints, 5000, &ai, &gai), BF_ERR_INVALID);
	T_EQ_INT(bf_resolve("localhost", "80", &hints, 0, &ai, &gai), BF_ERR_INVALID);
	T_EQ_INT(bf_resolve(NULL, "80", &hints, 5000, &ai, &gai), BF_ERR_INVALID);
	T_CHECK(ai == NULL);

	/* lookups one after another never count against the cap: every
	 * finished one has given its slot back */
	for (i = 0; i < 20; i++) {
		T_EQ_INT(bf_resolve("localhost", "80", &hints, 5000, &ai, NULL), 0);
		freeaddrinfo(ai);
		ai = NULL;
	}
	return t_done();
}

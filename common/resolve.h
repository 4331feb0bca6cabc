/*
 * resolve.h: getaddrinfo(3) with a deadline. glibc's resolver waits as
 * long as resolv.conf says (5 s a try, 2 tries, per nameserver), and a
 * name whose nameserver never answers would hold its caller that long:
 * a peer-bundle fetch slot in the coordinator (fetch.c), or a user at the
 * CLI whose --url names such a host.
 *
 * An IPv4 or IPv6 address is read at once, on the caller's thread. A
 * name's lookup runs on a detached thread; the caller waits at most
 * timeout_ms for it and, on timeout, leaves it to finish and free itself.
 * At most BF_MAX_RESOLVING lookups run at once in a process, abandoned
 * ones included, so slow names cannot pile up threads.
 */
#ifndef BF_RESOLVE_H
#define BF_RESOLVE_H

#include <netdb.h>

/*
 * Resolve host and port with hints (ai_family, ai_socktype, ai_protocol,
 * ai_flags; NULL means any stream socket) within timeout_ms (> 0).
 * Returns 0 and *aip (the caller frees it with freeaddrinfo), or:
 *   BF_ERR_NOTFOUND  getaddrinfo failed; *gai holds its code (gai_strerror)
 *   BF_ERR_TIMEOUT   no answer within timeout_ms
 *   BF_ERR_STATE     BF_MAX_RESOLVING lookups of names are already waiting
 *   BF_ERR_INVALID   host over 255 or port over 7 bytes, or timeout_ms <= 0
 *   BF_ERR_ALLOC, BF_ERR_SYS
 * *gai is 0 unless BF_ERR_NOTFOUND. gai may be NULL.
 */
int bf_resolve(const char *host, const char *port, const struct addrinfo *hints,
    int timeout_ms, struct addrinfo **aip, int *gai);

#endif

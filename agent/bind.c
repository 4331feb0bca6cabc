/*
 * bind.c: CPU and NUMA placement and ASLR for the workload's children.
 * Everything that can fail on bad input fails in bind_parse_list or
 * bind_resolve, before anything runs; bind_apply only makes syscalls.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind.h"
#include "err.h"
#include "parse.h"

#define BIND_MPOL_BIND	2	/* linux/mempolicy.h */

static void
bind_setbit(unsigned long *mask, size_t bit)
{
	mask[bit / BIND_WORD_BITS] |= 1UL << (bit % BIND_WORD_BITS);
}

static int
bind_bit(const unsigned long *mask, size_t bit)
{
	return (mask[bit / BIND_WORD_BITS] >> (bit % BIND_WORD_BITS)) & 1;
}

int
bind_parse_list(const char *s, unsigned long *mask, size_t nbits, char *why, size_t whysz)
{
	const char *p = s, *comma, *dash;
	int64_t lo, hi, i;
	size_t len, n;

	memset(mask, 0, (nbits + BIND_WORD_BITS - 1) / BIND_WORD_BITS * sizeof(*mask));
	if ((len = strlen(s)) == 0 || len > BIND_MAX_LIST) {
		snprintf(why, whysz, "%s list", len == 0 ? "empty" : "over-long");
		return BF_ERR_INVALID;
	}
	for (;;) {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		dash = memchr(p, '-', n);
		if (dash != NULL) {
			if (parse_i64_n(p, (size_t)(dash - p), 0, (int64_t)nbits - 1, &lo) != 0 ||
			    parse_i64_n(dash + 1, n - (size_t)(dash - p) - 1, 0,
			    (int64_t)nbits - 1, &hi) != 0 || hi < lo) {
				snprintf(why, whysz, "\"%.*s\" is not a range a-b with "
				    "0 <= a <= b < %zu", (int)(n > 40 ? 40 : n), p, nbits);
				return BF_ERR_INVALID;
			}
		} else if (parse_i64_n(p, n, 0, (int64_t)nbits - 1, &lo) != 0) {
			snprintf(why, whysz, "\"%.*s\" is not a number in 0..%zu",
			    (int)(n > 40 ? 40 : n), p, nbits - 1);
			return BF_ERR_INVALID;
		} else
			hi = lo;
		/* a leading '+' or '-' sign would pass parse_i64_n */
		if (p[0] == '+' || (dash != NULL && (dash[1] == '+' || dash[1] == '-'))) {
			snprintf(why, whysz, "signs are not allowed");
			return BF_ERR_INVALID;
		}
		for (i = lo; i <= hi; i++)
			bind_setbit(mask, (size_t)i);
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return 0;
}

void
bind_format_list(const unsigned long *mask, size_t nbits, char *out, size_t outsz)
{
	size_t i = 0, j, o = 0;

	out[0] = '\0';
	while (i < nbits && o + 1 < outsz) {
		if (!bind_bit(mask, i)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < nbits && bind_bit(mask, j + 1); j++)
			;
		if (j == i)
			o += (size_t)snprintf(out + o, outsz - o, "%s%zu", o ? "," : "", i);
		else
			o += (size_t)snprintf(out + o, outsz - o, "%s%zu-%zu", o ? "," : "", i, j);
		i = j + 1;
	}
}

/* Read a small sysfs file into buf, newline cut. */
static int
bind_read(const char *path, char *buf, size_t bufsz)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return BF_ERR_IO;
	n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n < 0)
		return BF_ERR_IO;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

int
bind_resolve(struct bind *b, char *why, size_t whysz)
{
	unsigned long want[BIND_MAX_CPUS / BIND_WORD_BITS], node[BIND_MAX_CPUS / BIND_WORD_BITS];
	char path[96], list[BIND_MAX_LIST + 1], sub[128];
	size_t i, n, any = 0;

	list[0] = '\0';
	b->affinity_set = b->cpus_set || b->nodes_set;
	for (i = 0; i < BIND_MAX_CPUS / BIND_WORD_BITS; i++)
		want[i] = b->cpus_set ? b->cpus[i] : ~0UL;
	/* only online cpus: sched_setaffinity's EINVAL would say nothing */
	if (b->affinity_set &&
	    bind_read("/sys/devices/system/cpu/online", list, sizeof(list)) == 0 &&
	    bind_parse_list(list, node, BIND_MAX_CPUS, sub, sizeof(sub)) == 0)
		for (i = 0; i < BIND_MAX_CPUS / BIND_WORD_BITS; i++)
			want[i] &= node[i];
	if (b->nodes_set) {
		memset(node, 0, sizeof(node));
		for (n = 0; n < BIND_MAX_NODES; n++) {
			unsigned long one[BIND_MAX_CPUS / BIND_WORD_BITS];

			if (!bind_bit(b->nodes, n))
				continue;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%zu/cpulist", n);
			if (bind_read(path, list, sizeof(list)) != 0) {
				snprintf(why, whysz, "bind.cpunodebind: node %zu does not exist "
				    "on this machine", n);
				return BF_ERR_NOTFOUND;
			}
			if (list[0] == '\0')
				continue;	/* a memory-only node has no cpus */
			if (bind_parse_list(list, one, BIND_MAX_CPUS, sub, sizeof(sub)) != 0) {
				snprintf(why, whysz, "bind.cpunodebind: %s: %s", path, sub);
				return BF_ERR_PARSE;
			}
			for (i = 0; i < BIND_MAX_CPUS / BIND_WORD_BITS; i++)
				node[i] |= one[i];
		}
		for (i = 0; i < BIND_MAX_CPUS / BIND_WORD_BITS; i++)
			want[i] &= node[i];
	}
	if (b->mem_set) {
		for (n = 0; n < BIND_MAX_NODES; n++) {
			if (!bind_bit(b->mem, n))
				continue;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%zu", n);
			if (access(path, F_OK) != 0) {
				snprintf(why, whysz, "bind.membind: node %zu does not exist on "
				    "this machine", n);
				return BF_ERR_NOTFOUND;
			}
		}
	}
	if (!b->affinity_set)
		return 0;
	CPU_ZERO(&b->affinity);
	for (i = 0; i < BIND_MAX_CPUS; i++)
		if (bind_bit(want, i)) {
			CPU_SET(i, &b->affinity);
			any++;
		}
	if (any == 0) {
		bind_format_list(b->cpus, BIND_MAX_CPUS, sub, sizeof(sub));
		snprintf(why, whysz, "bind: no cpu is left of bind.cpus \"%s\"%s among the online "
		    "cpus \"%s\"", b->cpus_set ? sub : "(all)",
		    b->nodes_set ? " within bind.cpunodebind" : "", list);
		return BF_ERR_INVALID;
	}
	return 0;
}

int
bind_apply(const struct bind *b, const char **what)
{
	int pers;

	if (b->affinity_set && sched_setaffinity(0, sizeof(b->affinity), &b->affinity) != 0) {
		*what = "sched_setaffinity";
		return -1;
	}
	if (b->mem_set && syscall(SYS_set_mempolicy, BIND_MPOL_BIND, b->mem,
	    (unsigned long)BIND_MAX_NODES + 1) != 0) {
		*what = "set_mempolicy";
		return -1;
	}
	if (b->aslr_off) {
		/* personality(0xffffffff) reads the current persona */
		if ((pers = personality(0xffffffff)) == -1 ||
		    personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1) {
			*what = "personality";
			return -1;
		}
	}
	return 0;
}

/*
 * agent_test_probe.c: the fingerprint parsers on fixture text (x86 and
 * arm64 cpuinfo, os-release, /proc/version, meminfo, cmdline), with
 * truncated and hostile input.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "probe.h"
#include "sha256.h"
#include "t.h"

static const char cpuinfo_x86[] =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
    "model name\t: AMD EPYC 9654 96-Core Processor\nstepping\t: 1\nmicrocode\t: 0xa101144\n"
    "physical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu vme la57 pse\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
    "model name\t: AMD EPYC 9654 96-Core Processor\nstepping\t: 1\nphysical id\t: 0\n"
    "core id\t\t: 0\nflags\t\t: fpu vme la57 pse\n\n"
    "processor\t: 2\nphysical id\t: 1\ncore id\t\t: 0\nflags\t\t: fpu\n\n"
    "processor\t: 3\nphysical id\t: 1\ncore id\t\t: 1\nflags\t\t: fpu\n";

static const char cpuinfo_arm[] =
    "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
    "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n"
    "processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";

static void
test_cpuinfo(void)
{
	struct probe_cpu c;

	T_EQ_INT(probe_cpuinfo(cpuinfo_x86, strlen(cpuinfo_x86), &c), 0);
	T_EQ_STR(c.model, "AMD EPYC 9654 96-Core Processor");
	T_EQ_STR(c.vendor, "AuthenticAMD");
	T_EQ_INT(c.family, 25);
	T_EQ_INT(c.model_no, 17);
	T_EQ_INT(c.stepping, 1);
	T_EQ_STR(c.microcode, "0xa101144");
	T_EQ_INT(c.threads, 4);
	T_EQ_INT(c.sockets, 2);
	T_EQ_INT(c.cores, 3);
	T_EQ_INT(c.la57, 1);

	T_EQ_INT(probe_cpuinfo(cpuinfo_arm, strlen(cpuinfo_arm), &c), 0);
	T_EQ_STR(c.vendor, "0x41");
	T_EQ_INT(c.family, 8);
	T_EQ_INT(c.model_no, 0xd0c);
	T_EQ_INT(c.stepping, 3);
	T_EQ_INT(c.threads, 2);
	T_EQ_INT(c.sockets, 1);
	T_EQ_INT(c.cores, 2);
	T_EQ_INT(c.la57, 0);
	T_EQ_STR(c.model, "part 0xd0c");

	/* truncated in the middle of a line; nothing at all; no colon */
	T_EQ_INT(probe_cpuinfo(cpuinfo_x86, 40, &c), 0);
	T_EQ_INT(c.threads, 1);
	T_EQ_INT(probe_cpuinfo("", 0, &c), -4);
	T_EQ_INT(probe_cpuinfo("processor 0\n", 12, &c), -4);
	/* "la57x" is not la57; "model name" is not "model" */
	T_EQ_INT(probe_cpuinfo("processor: 0\nflags: la57x xla57\nmodel name: 7\n", 45, &c), 0);
	T_EQ_INT(c.la57, 0);
	T_EQ_INT(c.model_no, -1);
}

static void
test_cpuinfo_long(void)
{
	struct probe_cpu c;
	size_t n = 20000;
	char *big = malloc(n + 64);

	if (big == NULL)
		return;
	memcpy(big, "processor: 0\nmodel name: ", 25);
	memset(big + 25, 'x', n);
	memcpy(big + 25 + n, "\n", 2);
	T_EQ_INT(probe_cpuinfo(big, strlen(big), &c), 0);
	T_EQ_INT(strlen(c.model), sizeof(c.model) - 1);
	free(big);
}

static void
test_os_release(void)
{
	char out[128];
	const char *t = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
	    "ID=debian\n";

	probe_os_release(t, strlen(t), out, sizeof(out));
	T_EQ_STR(out, "Debian GNU/Linux 12 (bookworm)");
	t = "PRETTY_NAME=Alpine\n";
	probe_os_release(t, strlen(t), out, sizeof(out));
	T_EQ_STR(out, "Alpine");
	t = "PRETTY_NAME='Fedora 40'";
	probe_os_release(t, strlen(t), out, sizeof(out));
	T_EQ_STR(out, "Fedora 40");
	t = "NAME=x\nXPRETTY_NAME=\"no\"\n";
	probe_os_release(t, strlen(t), out, sizeof(out));
	T_EQ_STR(out, "");
	t = "PRETTY_NAME=\"";
	probe_os_release(t, strlen(t), out, sizeof(out));
	T_EQ_STR(out, "\"");
}

static void
test_version_cmdline_meminfo(void)
{
	char out[256];
	const char *v = "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) "
	    "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) "
	    "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)";
	const char *mi = "Node 0 MemTotal:       395937516 kB\nNode 0 MemFree: 1 kB\n";

	probe_compiler(v, out, sizeof(out));
	T_EQ_STR(out, "gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40");
	probe_compiler("Linux version 6.1 (x)", out, sizeof(out));
	T_EQ_STR(out, "");
	probe_compiler("Linux version 6.1 (x) (unclosed", out, sizeof(out));
	T_EQ_STR(out, "");
	T_CHECK(probe_cmdline_has("root=/dev/sda no5lvl quiet", "no5lvl"));
	T_CHECK(probe_cmdline_has("no5lvl", "no5lvl"));
	T_CHECK(!probe_cmdline_has("xno5lvl quiet", "no5lvl"));
	T_CHECK(!probe_cmdline_has("no5lvlx", "no5lvl"));
	T_CHECK(probe_cmdline_has("a transparent_hugepage=never", "transparent_hugepage"));
	T_EQ_INT(probe_memtotal_kb(mi, strlen(mi)), 395937516);
	T_EQ_INT(probe_memtotal_kb("MemTotal:\n", 10), -1);
	T_EQ_INT(probe_memtotal_kb("MemFree: 3 kB", 13), -1);
	T_EQ_INT(probe_memtotal_kb("MemTotal: 99999999999999999999999 kB", 36), -1);
}

static void
test_identity(void)
{
	struct probe_cpu c;
	struct buf a, b;
	char ha[65], hb[65];

	buf_init(&a, 4096);
	buf_init(&b, 4096);
	T_EQ_INT(probe_cpuinfo(cpuinfo_x86, strlen(cpuinfo_x86), &c), 0);
	/* memory that moves by less than half a GiB is the same machine */
	T_OK(probe_identity(&c, 2, 791875032, &a));
	T_OK(probe_identity(&c, 2, 791875032 - 100000, &b));
	sha256_hex(a.data, a.len, ha);
	sha256_hex(b.data, b.len, hb);
	T_EQ_STR(ha, hb);
	T_CONTAINS(a.data, "cpu_model=AMD EPYC 9654 96-Core Processor\n");
	T_CONTAINS(a.data, "sockets=2\n");
	T_CONTAINS(a.data, "mem_gib=755\n");
	/* the microcode is not identity */
	c.microcode[0] = '\0';
	buf_reset(&b);
	T_OK(probe_identity(&c, 2, 791875032, &b));
	sha256_hex(b.data, b.len, hb);
	T_EQ_STR(ha, hb);
	c.stepping = 2;
	buf_reset(&b);
	T_OK(probe_identity(&c, 2, 791875032, &b));
	sha256_hex(b.data, b.len, hb);
	T_CHECK(strcmp(ha, hb) != 0);
	buf_free(&a);
	buf_free(&b);
}

int
main(void)
{
	test_cpuinfo();
	test_cpuinfo_long();
	test_os_release();
	test_version_cmdline_meminfo();
	test_identity();
	return t_done();
}

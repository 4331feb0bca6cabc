/*
 * fuzz_boot.c: a machine's boot config as POST /machines gives it
 * (boot_config_loads against a fixed profile table), the view every API
 * role reads (boot_config_view), and the remote command a valid config
 * builds. No answer may ever carry a profile's words: the table's commands
 * hold a marker that must show up in no message, view or error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "boot.h"
#include "buf.h"
#include "caps.h"

#define FUZZ_SECRET "FUZZSECRET"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct boot_profiles profiles;

static void
add(const char *kind, const char *name, char *const *words, size_t n)
{
	static const unsigned char unquoted[8];
	struct bf_diag d;

	if (boot_profiles_add(&profiles, kind, name, words, unquoted, n, &d) != 0)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *pw[] = { "ipmitool", "-P", FUZZ_SECRET, "chassis", "power", "cycle", NULL };
	char *bc[] = { "/sbin/lab-boot-" FUZZ_SECRET, "{kernel}", "--append={cmdline}",
	    "{image}", "{initrd}", NULL };

	add("power", "ipmi-a", pw, 6);
	add("boot-command", "lab", bc, 5);
	boot_profiles_use(&profiles);
	return 0;
}

/* Set per input: the input itself holds the marker (then messages may
 * quote it back, as they quote the caller's own text). */
static int echoed;

static void
no_secret(const char *s)
{
	if (!echoed && s != NULL && strstr(s, FUZZ_SECRET) != NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct boot_machine *m = NULL;
	struct bf_diag d;
	struct buf cmd;
	json_t *v;
	char *err = NULL, *text = NULL, *nul;

	if (size > BF_MAX_API_BODY)
		return 0;
	echoed = memmem(data, size, FUZZ_SECRET, strlen(FUZZ_SECRET)) != NULL;
	bf_diag_clear(&d);
	buf_init(&cmd, BF_MAX_ARG * 4);
	if (boot_config_loads((const char *)data, size, &m, &d) == 0) {
		if (m->nkernels > 0 && boot_reboot_command(m, m->kernels[0].release,
		    "nokaslr a=b", &cmd, &d) != 0 && strcmp(boot_method_name(m), "command") == 0)
			abort();	/* a valid config builds its command */
	}
	no_secret(d.msg);
	/* the view takes NUL-terminated text, as the store holds it */
	if ((nul = malloc(size + 1)) != NULL) {
		memcpy(nul, data, size);
		nul[size] = '\0';
		if ((v = boot_config_view(nul, &err)) != NULL) {
			text = json_dumps(v, JSON_COMPACT);
			no_secret(text);
			json_decref(v);
		}
		no_secret(err);
		free(nul);
	}
	free(text);
	free(err);
	buf_free(&cmd);
	boot_machine_free(m);
	return 0;
}

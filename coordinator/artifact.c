/*
 * artifact.c: reassembling an artifact from the agent's lines. Nothing the
 * agent claims is believed: its size and hash are recomputed here, and
 * the store hashes the bytes again as it keeps them.
 */
#include <stdio.h>
#include <string.h>

#include "artifact.h"
#include "b64.h"
#include "err.h"
#include "sha256.h"

void
artifact_rx_init(struct artifact_rx *a)
{
	memset(a, 0, sizeof(*a));
	buf_init(&a->data, 1);
}

static void
artifact_rx_start(struct artifact_rx *a, const char *name, int64_t max)
{
	buf_free(&a->data);
	buf_init(&a->data, (size_t)max);
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->next_seq = 0;
	a->bad[0] = '\0';
}

void
artifact_rx_chunk(struct artifact_rx *a, const struct agentline_artifact *c)
{
	int r;

	if (c->seq == 0)
		artifact_rx_start(a, c->name, c->max);
	if (a->bad[0] != '\0')
		return;
	if (strcmp(a->name, c->name) != 0 || c->seq != a->next_seq) {
		snprintf(a->bad, sizeof(a->bad), "chunk %lld of %s arrived where chunk %lld of "
		    "%s was due", (long long)c->seq, c->name, (long long)a->next_seq,
		    a->name[0] ? a->name : "(none)");
		return;
	}
	if ((r = b64_decode(&a->data, c->data, c->data_len)) != 0) {
		snprintf(a->bad, sizeof(a->bad), "chunk %lld: %s", (long long)c->seq,
		    r == BF_ERR_TOOBIG ? "over the artifact's cap" : "not base64");
		return;
	}
	a->next_seq++;
}

int
artifact_rx_end(struct artifact_rx *a, const struct agentline_artifact_end *e, char *why,
    size_t whysz)
{
	char hex[65];
	int r = BF_ERR_INVALID;

	if (e->dropped != NULL) {
		snprintf(why, whysz, "%s (%lld bytes) not sent by the agent: %s", e->name,
		    (long long)e->bytes, e->dropped);
		goto out;
	}
	if (a->name[0] == '\0' && e->bytes == 0) {
		artifact_rx_start(a, e->name, e->max);	/* empty: no chunk at all */
		snprintf(a->name, sizeof(a->name), "%s", e->name);
	}
	if (strcmp(a->name, e->name) != 0) {
		snprintf(why, whysz, "%s: its end arrived without its chunks", e->name);
		goto out;
	}
	if (a->bad[0] != '\0') {
		snprintf(why, whysz, "%s refused: %s", e->name, a->bad);
		goto out;
	}
	sha256_hex(a->data.data != NULL ? a->data.data : "", a->data.len, hex);
	if ((int64_t)a->data.len != e->bytes || strcmp(hex, e->sha256) != 0) {
		snprintf(why, whysz, "%s refused: %zu bytes with sha256 %.12s..., the agent said "
		    "%lld bytes, %.12s...", e->name, a->data.len, hex, (long long)e->bytes,
		    e->sha256);
		goto out;
	}
	a->name[0] = '\0';	/* the next chunk 0 starts afresh; data stays for the caller */
	return 0;
out:
	a->name[0] = '\0';
	a->bad[0] = '\0';
	buf_reset(&a->data);
	return r;
}

void
artifact_rx_free(struct artifact_rx *a)
{
	if (a == NULL)
		return;
	buf_free(&a->data);
	memset(a, 0, sizeof(*a));
}

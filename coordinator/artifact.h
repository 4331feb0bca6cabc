/*
 * artifact.h: a profile's artifact as it arrives in agent lines (artifact
 * chunks, then artifact_end; docs/agent-protocol.md), reassembled and
 * checked before anything is stored: chunks in order from seq 0, strict
 * base64, within the artifact's cap, and the bytes' size and sha256 what
 * the end line says. Pure: no store, no I/O. One artifact at a time: the
 * agent sends them one after the other.
 */
#ifndef BF_ARTIFACT_H
#define BF_ARTIFACT_H

#include <stdint.h>

#include "agentline.h"
#include "buf.h"

struct artifact_rx {
	char name[16];		/* of the artifact in progress, "" when none */
	int64_t next_seq;
	struct buf data;	/* decoded so far, capped at its artifact's max */
	char bad[160];		/* why the artifact in progress is refused, "" if not */
};

void artifact_rx_init(struct artifact_rx *a);
/* A chunk: appended when it is the next one of this artifact; else the
 * artifact is marked bad (and said why at its end). */
void artifact_rx_chunk(struct artifact_rx *a, const struct agentline_artifact *c);
/*
 * The end line: 0 when the bytes are complete and match it (a->data holds
 * them until the next artifact_rx_* call), else BF_ERR_INVALID with why
 * (for the run log): dropped by the agent, out of order, or a mismatch.
 */
int artifact_rx_end(struct artifact_rx *a, const struct agentline_artifact_end *e, char *why,
    size_t whysz);
void artifact_rx_free(struct artifact_rx *a);

#endif

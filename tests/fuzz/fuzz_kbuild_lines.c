/*
 * fuzz_kbuild_lines.c: what the coordinator does with a builder's output
 * (kdispatch.c): split it into lines under BF_MAX_AGENT_LINE, decode each
 * with kbline_decode, and put the build's artifacts together with
 * artifact_rx as kd_on_line does (chunks, then the end line checked
 * against the bytes), and the compiler's error line picked from the log
 * lines with kbuild_error_line.
 */
#include <stdint.h>
#include <string.h>

#include "artifact.h"
#include "buf.h"
#include "caps.h"
#include "kbline.h"
#include "kbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	struct artifact_rx art;
	struct bf_diag d;
	struct kbline l;
	struct buf log;
	char why[512], err[BF_MAX_LOG_LINE + 1];
	size_t len;

	artifact_rx_init(&art);
	buf_init(&log, 1 << 20);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (kbline_decode(p, len, &l, &d) == 0) {
			switch (l.type) {
			case KBLINE_LOG:
				if (l.u.log.line != NULL && (buf_puts(&log, l.u.log.line) != 0 ||
				    buf_puts(&log, "\n") != 0))
					buf_reset(&log);
				break;
			case KBLINE_ARTIFACT:
				artifact_rx_chunk(&art, &l.u.artifact);
				break;
			case KBLINE_ARTIFACT_END:
				(void)artifact_rx_end(&art, &l.u.artifact_end, why, sizeof(why));
				break;
			default:
				break;
			}
		}
		kbline_clear(&l);
		p += len + (nl != NULL);
	}
	kbuild_error_line(log.data != NULL ? log.data : "", log.len, err, sizeof(err));
	buf_free(&log);
	artifact_rx_free(&art);
	return 0;
}

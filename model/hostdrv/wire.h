/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A wire between two devices of the fake host (hostdrv.h): what the host unit tests and the
 * fuzzers put between a pair of devices.
 */
#ifndef TERN_HOSTDRV_WIRE_H
#define TERN_HOSTDRV_WIRE_H

#include "hostdrv.h"

/* ---- a wire between two fake hosts -------------------------------------------------------
 * Frames each device transmits are taken from its capture, passed to an optional filter
 * (which may change them), logged, and given to the other device in the order they were
 * sent. Both devices share one virtual clock, moved by wire_advance().
 */
enum wire_action {
	W_DELIVER = 0,
	W_DROP,		/* lost on the wire */
	W_DUP,		/* delivered twice */
	W_HOLD,		/* delivered after the next frame in the same direction (reorder) */
};

struct wire;
/*
 * dir 0: end[0] -> end[1]; idx counts frames sent in that direction from 0. A filter may
 * grow the frame by up to FK_FRAME_ROOM bytes (a switch's INT record).
 */
typedef enum wire_action (*wire_filter_fn)(struct wire *w, unsigned int dir, unsigned int idx,
					    uint8_t *frame, size_t *len);

struct wire_rec {
	uint8_t dir;
	uint8_t action;
	uint32_t idx;		/* per direction */
	uint64_t t;		/* virtual time it was sent */
	size_t len;		/* after the filter */
	uint8_t *data;		/* copy, after the filter */
};

struct wire {
	struct fake *end[2];
	wire_filter_fn filter;
	void *ctx;
	unsigned int sent[2];
	unsigned long refused;		/* rx_frame returned 0 (dropped by the wire) */
	struct wire_rec *log;
	unsigned int nlog, log_cap;
	uint8_t *held[2];
	size_t held_len[2];
	/*
	 * Fuzzers bound the work of one input: once @limit frames (0: no limit) were carried
	 * since @carried was last zeroed, the wire loses every frame, uncounted in the log, and
	 * counts it in @over. A peer allowed to retry without end (rnr_retry 7 against a
	 * responder with no receive posted) otherwise fills memory with its resends.
	 */
	unsigned long limit, carried, over;
};

void wire_init(struct wire *w, struct fake *a, struct fake *b);
void wire_fini(struct wire *w);
/* Move frames and run both devices until nothing moves (no virtual time passes). */
void wire_pump(struct wire *w);
/* Pump, firing the devices' timers in deadline order, until @ns of virtual time passed. */
void wire_advance(struct wire *w, uint64_t ns);
uint64_t wire_now(const struct wire *w);
void wire_clear_log(struct wire *w);

#endif /* TERN_HOSTDRV_WIRE_H */

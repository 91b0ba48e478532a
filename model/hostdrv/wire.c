/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A wire between two fake hosts' devices (wire.h). */
#include <stdlib.h>

#include "wire.h"

/* ---- wire ---------------------------------------------------------------------------------- */

void wire_init(struct wire *w, struct fake *a, struct fake *b)
{
	memset(w, 0, sizeof(*w));
	w->end[0] = a;
	w->end[1] = b;
	b->now = a->now;
}

void wire_clear_log(struct wire *w)
{
	unsigned int i;

	for (i = 0; i < w->nlog; i++)
		free(w->log[i].data);
	w->nlog = 0;
}

void wire_fini(struct wire *w)
{
	unsigned int d;

	wire_clear_log(w);
	free(w->log);
	w->log = NULL;
	w->log_cap = 0;
	for (d = 0; d < 2; d++) {
		free(w->held[d]);
		w->held[d] = NULL;
	}
}

uint64_t wire_now(const struct wire *w)
{
	return w->end[0]->now;
}

static void wire_log(struct wire *w, unsigned int dir, unsigned int idx, enum wire_action a,
		     const uint8_t *data, size_t len)
{
	struct wire_rec *r;

	if (w->nlog == w->log_cap) {
		unsigned int cap = w->log_cap ? 2 * w->log_cap : 1024;
		struct wire_rec *n = realloc(w->log, cap * sizeof(*n));

		if (!n) {
			printf("# fatal, the program stops: out of memory\n");
			exit(2);
		}
		w->log = n;
		w->log_cap = cap;
	}
	r = &w->log[w->nlog++];
	r->dir = (uint8_t)dir;
	r->action = (uint8_t)a;
	r->idx = idx;
	r->t = wire_now(w);
	r->len = len;
	r->data = malloc(len ? len : 1);
	if (!r->data) {
		printf("# fatal, the program stops: out of memory\n");
		exit(2);
	}
	memcpy(r->data, data, len);
}

static void wire_deliver(struct wire *w, unsigned int dir, const uint8_t *data, size_t len)
{
	if (!len)
		return;
	if (!tern_model_rx_frame(w->end[!dir]->m, data, len))
		w->refused++;
}

/* Hand one frame sent in @dir to the filter and on to the other end; takes @data. */
static void wire_one(struct wire *w, unsigned int dir, uint8_t *data, size_t len)
{
	unsigned int idx = w->sent[dir]++;
	enum wire_action a = W_DELIVER;

	if (w->limit && ++w->carried > w->limit) {
		w->over++;
		free(data);
		return;
	}
	if (w->filter)
		a = w->filter(w, dir, idx, data, &len);
	wire_log(w, dir, idx, a, data, len);
	switch (a) {
	case W_DROP:
		break;
	case W_DUP:
		wire_deliver(w, dir, data, len);
		wire_deliver(w, dir, data, len);
		break;
	case W_HOLD:
		if (!w->held[dir]) {
			w->held[dir] = data;
			w->held_len[dir] = len;
			return;
		}
		/* fall through: only one frame is held back at a time */
	case W_DELIVER:
	default:
		wire_deliver(w, dir, data, len);
		break;
	}
	if (w->held[dir] && a != W_HOLD) {
		uint8_t *h = w->held[dir];

		w->held[dir] = NULL;
		wire_deliver(w, dir, h, w->held_len[dir]);
		free(h);
	}
	free(data);
}

void wire_pump(struct wire *w)
{
	unsigned int i, d, n;
	bool moved;
	int iter;

	for (iter = 0; iter < 1000000; iter++) {
		moved = false;
		for (d = 0; d < 2; d++) {
			if (w->end[d]->kicks) {
				fk_run(w->end[d]);
				moved = true;
			}
		}
		for (d = 0; d < 2; d++) {
			struct fake *src = w->end[d];
			struct fk_frame *fr;

			n = src->nframes;
			if (!n)
				continue;
			/* take the batch: delivering may make the other end transmit */
			fr = src->frames;
			src->frames = NULL;
			src->frames_cap = 0;
			src->nframes = 0;
			for (i = 0; i < n; i++)
				wire_one(w, d, fr[i].data, fr[i].len);
			free(fr);
			moved = true;
		}
		if (moved)
			continue;
		/* quiet: a frame held back for reordering arrives late after all */
		for (d = 0; d < 2; d++) {
			if (w->held[d]) {
				uint8_t *h = w->held[d];

				w->held[d] = NULL;
				wire_deliver(w, d, h, w->held_len[d]);
				free(h);
				moved = true;
			}
		}
		if (!moved)
			return;
	}
	printf("# wire_pump: still busy after 1000000 rounds\n");
}

void wire_advance(struct wire *w, uint64_t ns)
{
	uint64_t target = wire_now(w) + ns;
	unsigned int d;
	int iter;

	wire_pump(w);
	for (iter = 0; iter < 1000000; iter++) {
		uint64_t dl = w->end[0]->deadline < w->end[1]->deadline ? w->end[0]->deadline
									: w->end[1]->deadline;

		if (dl > target)
			break;
		if (dl > wire_now(w))
			w->end[0]->now = w->end[1]->now = dl;
		for (d = 0; d < 2; d++) {
			if (w->end[d]->deadline <= wire_now(w)) {
				w->end[d]->deadline = UINT64_MAX;
				tern_model_timer(w->end[d]->m);
			}
		}
		wire_pump(w);
	}
	w->end[0]->now = w->end[1]->now = target;
	wire_pump(w);
}

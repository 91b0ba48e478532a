/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the port's transmitter towards the wire, with fault injection
 * (SET_WIRE_FAULTS / QUERY_WIRE_FAULTS).
 *
 * ternm_wire_tx() is the only caller of host->tx_frame: every frame the port sends (Ethernet
 * TX, RoCE, PFC) goes through the MAC's ternm_mac_tx() (mac.c: line-rate accounting and
 * per-priority counters) and then through it. Frames the port loops back to its own MAC
 * never reach it.
 *
 * Decisions (see Documentation/hw/commands.rst):
 *  - Every frame counts in @frames. When injection is on (a probability is not zero) and the
 *    frame is eligible (any frame, or only UDP/4791 ones with TERN_WIRE_FAULT_F_ROCE_ONLY),
 *    five numbers are drawn from a splitmix64 generator, always in this order: drop, corrupt,
 *    duplicate, reorder (each compared with its probability) and the bit to flip. Drawing
 *    all five every time keeps the decisions independent of each other's probabilities: a
 *    seed damages the same frames whatever else is enabled.
 *  - dropped: nothing else applies. corrupted: one bit flipped, uniformly among the bits
 *    after the Ethernet header (14 bytes, 18 with an 802.1Q tag). duplicated: the frame goes
 *    out twice in a row. reordered: the frame (both copies if duplicated) is held and sent
 *    right after the next frame that goes out; if a frame is already held, the new one
 *    cannot be held too: it is sent, followed by the held one, and does not count as
 *    reordered. A held frame is also sent when the transmitter goes idle: at the end of
 *    tern_model_run() and tern_model_timer(), before a SET_WIRE_FAULTS takes effect, before
 *    the link goes down and before a device reset.
 *  - The port's own counters (eth tx_frames/tx_bytes, rdma tx_roce_packets/tx_roce_bytes)
 *    count frames the port transmitted, before the injector: a frame it drops still
 *    counts once, a duplicated one once. The injector's counters tell what the wire did.
 */
#include "frame.h"
#include "tern_model_int.h"

static uint64_t wire_next(struct ternm_wire *w)
{
	uint64_t z;

	w->rng += 0x9e3779b97f4a7c15ull;
	z = w->rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* True with probability @ppm / 10^6 (a uniform draw in 0..999999 below ppm). */
static bool wire_chance(struct ternm_wire *w, uint32_t ppm)
{
	uint64_t v = ((wire_next(w) >> 32) * TERN_WIRE_FAULT_PPM_MAX) >> 32;

	return v < ppm;
}

static bool wire_active(const struct ternm_wire *w)
{
	return w->drop_ppm || w->corrupt_ppm || w->duplicate_ppm || w->reorder_ppm;
}

static void wire_out(struct tern_model *m, const uint8_t *frame, size_t len)
{
	if (m->host.tx_frame)
		m->host.tx_frame(m->host.opaque, frame, len);
}

/* Send the frame held back for reordering, if any. */
void ternm_wire_idle(struct tern_model *m)
{
	struct ternm_wire *w = &m->wire;
	unsigned int n = w->held, i;

	w->held = 0;
	for (i = 0; i < n; i++)
		wire_out(m, w->held_buf, w->held_len);
}

void ternm_wire_tx(struct tern_model *m, const uint8_t *frame, size_t len)
{
	struct ternm_wire *w = &m->wire;
	bool drop = false, corrupt = false, dup = false, hold = false;
	uint64_t bit = 0;

	w->frames++;
	if (wire_active(w) &&
	    (!(w->flags & TERN_WIRE_FAULT_F_ROCE_ONLY) || ternm_rdma_is_roce(m, frame, len))) {
		drop = wire_chance(w, w->drop_ppm);
		corrupt = wire_chance(w, w->corrupt_ppm);
		dup = wire_chance(w, w->duplicate_ppm);
		hold = wire_chance(w, w->reorder_ppm);
		bit = wire_next(w);
	}
	if (drop) {
		w->dropped++;
		return;
	}
	if (corrupt) {
		struct frame_info fi;
		size_t l2;

		frame_parse(frame, len, &fi);
		l2 = fi.l3;	/* the Ethernet header and tag are kept intact */
		if (len > l2 && len <= sizeof(w->buf)) {
			bit = l2 * 8 + bit % ((len - l2) * 8);
			memcpy(w->buf, frame, len);
			w->buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			frame = w->buf;
			w->corrupted++;
		}
	}
	if (dup)
		w->duplicated++;
	if (hold && !w->held && len <= sizeof(w->held_buf)) {
		memcpy(w->held_buf, frame, len);
		w->held_len = len;
		w->held = dup ? 2 : 1;
		w->reordered++;
		return;
	}
	wire_out(m, frame, len);
	if (dup)
		wire_out(m, frame, len);
	ternm_wire_idle(m);
}

/* Device reset: the held frame goes out, then settings and counters are forgotten. */
void ternm_wire_clear(struct tern_model *m)
{
	ternm_wire_idle(m);
	memset(&m->wire, 0, sizeof(m->wire));
}

int ternm_wire_set(struct tern_model *m, const uint8_t *in, uint32_t *syndrome)
{
	typedef struct tern_wire_faults T;
	static const size_t ppm_off[] = {
		offsetof(T, drop_ppm), offsetof(T, corrupt_ppm), offsetof(T, duplicate_ppm),
		offsetof(T, reorder_ppm),
	};
	struct ternm_wire *w = &m->wire;
	unsigned int i;

	for (i = 0; i < sizeof(ppm_off) / sizeof(ppm_off[0]); i++) {
		if (get_le32(in + ppm_off[i]) > TERN_WIRE_FAULT_PPM_MAX) {
			*syndrome = (uint32_t)ppm_off[i];
			return TERN_CMD_BAD_PARAM;
		}
	}
	if (get_le32(CFLD(in, T, flags)) & ~TERN_WIRE_FAULT_F_ROCE_ONLY) {
		*syndrome = offsetof(T, flags);
		return TERN_CMD_BAD_PARAM;
	}
	if (get_le32(CFLD(in, T, rsvd))) {
		*syndrome = offsetof(T, rsvd);
		return TERN_CMD_BAD_PARAM;
	}
	/* what the old setting held back goes out first */
	ternm_wire_idle(m);
	w->drop_ppm = get_le32(CFLD(in, T, drop_ppm));
	w->corrupt_ppm = get_le32(CFLD(in, T, corrupt_ppm));
	w->duplicate_ppm = get_le32(CFLD(in, T, duplicate_ppm));
	w->reorder_ppm = get_le32(CFLD(in, T, reorder_ppm));
	w->flags = get_le32(CFLD(in, T, flags));
	w->seed = get_le64(CFLD(in, T, seed));
	w->rng = w->seed;
	return TERN_CMD_OK;
}

void ternm_wire_query(struct tern_model *m, uint8_t *o)
{
	typedef struct tern_cmd_query_wire_faults_out T;
	typedef struct tern_wire_faults C;
	const struct ternm_wire *w = &m->wire;
	uint8_t *c = FLD(o, T, cfg);

	memset(o, 0, sizeof(T));
	put_le32(FLD(c, C, drop_ppm), w->drop_ppm);
	put_le32(FLD(c, C, corrupt_ppm), w->corrupt_ppm);
	put_le32(FLD(c, C, duplicate_ppm), w->duplicate_ppm);
	put_le32(FLD(c, C, reorder_ppm), w->reorder_ppm);
	put_le32(FLD(c, C, flags), w->flags);
	put_le64(FLD(c, C, seed), w->seed);
	put_le64(FLD(o, T, frames), w->frames);
	put_le64(FLD(o, T, dropped), w->dropped);
	put_le64(FLD(o, T, corrupted), w->corrupted);
	put_le64(FLD(o, T, duplicated), w->duplicated);
	put_le64(FLD(o, T, reordered), w->reordered);
}

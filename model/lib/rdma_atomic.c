/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: RC atomics (COMPARE_SWAP 0x13, FETCH_ADD 0x14, ATOMIC_ACKNOWLEDGE 0x12).
 *
 * The requester sends one packet per atomic WQE, BTH + AtomicETH (VA, R_Key, Swap or Add
 * Data, Compare Data, all big-endian); the responder checks it (rdma_resp.c), executes it
 * here on the 8 bytes of host memory, a little-endian u64, and answers BTH + AETH +
 * AtomicAckETH (the original value, big-endian) from a READ resource that keeps the
 * original value for duplicates. The device executes one packet at a time, so an atomic is
 * atomic against every other atomic of this device (IB "atomic at the HCA"), not against
 * the host CPUs.
 */
#include "rdma.h"

/* AtomicETH of the atomic WQE @wc at @x; returns its end. */
uint8_t *ternm_atomic_put_eth(uint8_t *x, const struct ternm_wqe_cache *wc)
{
	put_be64(x, wc->raddr);
	put_be32(x + 8, wc->rkey);
	put_be64(x + 12, wc->swap_add);
	/* FETCH_ADD: Compare Data is not used; send zero */
	put_be64(x + 20, wc->opcode == TERN_WQE_ATOMIC_CMP_SWP ? wc->compare : 0);
	return x + 28;
}

/*
 * Execute the atomic request @p on its (checked) MR: *orig is the value before. Returns 0,
 * or -1 when the memory cannot be read or written (nothing changed then, or the write failed).
 */
int ternm_atomic_exec(struct tern_model *m, const struct ternm_pkt *p, uint64_t *orig)
{
	uint8_t b[8];
	uint64_t v, nv;

	if (ternm_mr_copy(m, p->rkey, p->va, b, 8, false, false))
		return -1;
	v = get_le64(b);
	*orig = v;
	if (p->opcode == IBOP_FETCH_ADD)
		nv = v + p->swap_add;
	else if (v == p->compare)
		nv = p->swap_add;
	else
		return 0;		/* compare failed: memory unchanged, not even rewritten */
	put_le64(b, nv);
	return ternm_mr_copy(m, p->rkey, p->va, b, 8, true, false);
}

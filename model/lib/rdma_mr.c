/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: memory keys. Memory regions (CREATE_MR, DESTROY_MR), the checks every
 * access through a key passes (ternm_mr_check()), the copies through an MR's translation
 * (ternm_mr_copy()), and fast registration: REG_MR and LOCAL_INV work requests and a peer's
 * SEND with invalidate (ternm_mr_fast_reg(), ternm_mr_invalidate()).
 *
 * An MR is used (its index taken) and valid (its key usable). A FAST_REG MR is created
 * free (not valid) with room for max_pages page addresses; REG_MR makes it valid with a
 * new key byte and translation, an invalidation makes it free again. A free MR behaves as
 * a key that does not exist. MR indexes are allocated round-robin (next_mr), so a
 * destroyed MR's index is not at once reused. The rules for people are in the
 * "Memory keys" comment of include/linux/tern/tern_rdma.h and in Documentation/hw/rdma.rst.
 */
#include <stdlib.h>

#include "rdma.h"

/* The MR whose index @key names, used, whatever its key byte and state. */
static struct ternm_mr *mr_slot(struct tern_model *m, uint32_t key)
{
	uint32_t idx = key >> 8;

	if (idx >= TERNM_MAX_MR || !m->rdma->mr[idx].used)
		return NULL;
	return &m->rdma->mr[idx];
}

#define MW_FLAGS	(TERN_MR_F_MW_TYPE1 | TERN_MR_F_MW_TYPE2)
#define REMOTE_ANY	(TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_WRITE | \
			 TERN_ACCESS_REMOTE_ATOMIC)

static bool is_mw(const struct ternm_mr *mr)
{
	return mr->flags & MW_FLAGS;
}

/* The valid MR (not a window) @key names, key byte matching; NULL if none. */
static struct ternm_mr *mr_get(struct tern_model *m, uint32_t key)
{
	struct ternm_mr *mr = mr_slot(m, key);

	if (!mr || is_mw(mr) || !mr->valid || mr->key != (uint8_t)key)
		return NULL;
	return mr;
}

/*
 * The MR whose translation @key uses: the MR itself, or for a bound window its MR. NULL if
 * the key does not work (any more).
 */
static struct ternm_mr *key_mr(struct tern_model *m, uint32_t key)
{
	struct ternm_mr *mr = mr_slot(m, key);

	if (mr && is_mw(mr)) {
		if (!mr->valid || mr->key != (uint8_t)key)
			return NULL;
		return mr_get(m, mr->parent_key);
	}
	return mr_get(m, key);
}

static bool in_range(const struct ternm_mr *mr, uint64_t va, uint64_t len)
{
	if ((mr->flags & TERN_MR_F_PHYSICAL) && !mr->length)
		return true;		/* all memory */
	return va >= mr->iova && va + len <= mr->iova + mr->length;
}

/*
 * Check that [va, va + len) of the MR or window named by @key may be used by @qp with
 * @access (TERN_ACCESS_*; a window only with a remote right, by the QP it is bound to if it
 * is of type 2). Returns 0 or the enum tern_cqe_syndrome that explains why not.
 */
int ternm_mr_check(struct tern_model *m, uint32_t key, const struct ternm_qp *qp,
		   uint32_t access, uint64_t va, uint64_t len)
{
	struct ternm_mr *mr = mr_slot(m, key);

	if (va + len < va)
		return TERN_SYND_BOUNDS;
	if (mr && is_mw(mr)) {
		if (!mr->valid || mr->key != (uint8_t)key || !(access & REMOTE_ANY) ||
		    ((mr->flags & TERN_MR_F_MW_TYPE2) && mr->qpn != qp->qpn))
			return TERN_SYND_LKEY;
		if (mr->pdn != qp->pdn)
			return TERN_SYND_PD;
		if ((mr->access & access) != access)
			return TERN_SYND_ACCESS;
		if (!in_range(mr, va, len))
			return TERN_SYND_BOUNDS;
		mr = mr_get(m, mr->parent_key);	/* held valid while bound */
		if (!mr)
			return TERN_SYND_LKEY;
		return in_range(mr, va, len) ? 0 : TERN_SYND_BOUNDS;
	}
	mr = mr_get(m, key);
	if (!mr)
		return TERN_SYND_LKEY;
	if (mr->pdn != qp->pdn)
		return TERN_SYND_PD;
	if ((mr->access & access) != access)
		return TERN_SYND_ACCESS;
	return in_range(mr, va, len) ? 0 : TERN_SYND_BOUNDS;
}

/*
 * Copy between @buf and an MR range already checked with ternm_mr_check(). With
 * @last_byte_last (writes), the final byte is written after everything else, behind a
 * release fence, for software that polls it. Returns 0, or -1 on a DMA fault or a vanished MR.
 */
int ternm_mr_copy(struct tern_model *m, uint32_t key, uint64_t va, void *buf, uint32_t len,
		  bool write, bool last_byte_last)
{
	struct ternm_mr *mr = key_mr(m, key);
	uint8_t *b = buf;
	uint32_t body = len;

	if (!mr)
		return -1;
	if (len == 0)
		return 0;
	if (write && last_byte_last)
		body = len - 1;
	if (mr->flags & TERN_MR_F_PHYSICAL) {
		if (write) {
			if (ternm_dma_write(m, va, b, body))
				return -1;
			if (body != len) {
				__atomic_thread_fence(__ATOMIC_RELEASE);
				return ternm_dma_write(m, va + body, b + body, 1);
			}
			return 0;
		}
		return ternm_dma_read(m, va, b, len);
	}
	{
		uint64_t psize = 1ull << mr->page_shift;
		uint64_t off = (mr->iova & (psize - 1)) + (va - mr->iova);
		uint32_t done = 0;

		while (done < len) {
			uint64_t idx = off >> mr->page_shift;
			uint64_t in_page = off & (psize - 1);
			uint32_t chunk = len - done;
			int rc;

			if (idx >= mr->npages)
				return -1;
			if (chunk > psize - in_page)
				chunk = (uint32_t)(psize - in_page);
			if (write) {
				uint32_t c = chunk;

				if (done + c > body)
					c = body - done;	/* stop before the last byte */
				rc = ternm_dma_write(m, mr->pages[idx] + in_page, b + done, c);
				if (!rc && c != chunk) {
					__atomic_thread_fence(__ATOMIC_RELEASE);
					rc = ternm_dma_write(m, mr->pages[idx] + in_page + c,
							     b + done + c, 1);
				}
			} else {
				rc = ternm_dma_read(m, mr->pages[idx] + in_page, b + done, chunk);
			}
			if (rc)
				return -1;
			done += chunk;
			off += chunk;
		}
	}
	return 0;
}

/* Host memory of an MR's page array of @npages entries (ternm_host_mem_charge()). */
static uint64_t mr_pages_bytes(uint32_t npages)
{
	return (uint64_t)npages * sizeof(uint64_t);
}

/* Whether CREATE_MR's memory descriptor @pbl is all zero: -1, or the offset of a byte not. */
static int mr_pbl_zero(const uint8_t *pbl)
{
	uint32_t i;

	for (i = 0; i < sizeof(struct tern_mem_desc); i++)
		if (pbl[i])
			return (int)(offsetof(struct tern_cmd_create_mr_in, pbl) + i);
	return -1;
}

/*
 * The fields of CREATE_MR @in for the kind its @flags name: a window or a FAST_REG MR (no
 * translation yet), a PHYSICAL MR, or a plain MR with a page list. TERN_CMD_OK, or the
 * refusal (the offset of the field).
 */
static int mr_check_kind(const uint8_t *in, uint8_t flags, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_mr_in T;
	uint32_t access = get_le32(CFLD(in, T, access));
	uint64_t iova = get_le64(CFLD(in, T, iova));
	uint64_t length = get_le64(CFLD(in, T, length));
	uint8_t shift = in[offsetof(T, page_shift)];
	uint32_t npages = get_le32(CFLD(in, T, npages));
	int off;

	if (flags & (MW_FLAGS | TERN_MR_F_FAST_REG)) {
		/*
		 * No translation yet: a window gets one from BIND_MW (ternm_mw_bind()), a
		 * FAST_REG MR from REG_MR (ternm_mr_fast_reg()), with room for npages pages.
		 */
		off = mr_pbl_zero(CFLD(in, T, pbl));
		if (off >= 0)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, (size_t)off);
		if (access)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, access));
		if (iova)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, iova));
		if (length)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, length));
		if (shift)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, page_shift));
		if ((flags & MW_FLAGS) ? npages != 0 :
		    npages == 0 || npages > TERNM_MAX_FAST_REG_PAGES)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, npages));
	} else if (flags & TERN_MR_F_PHYSICAL) {
		off = mr_pbl_zero(CFLD(in, T, pbl));
		if (off >= 0)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, (size_t)off);
		if (npages)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, npages));
		if (shift && (shift > 63 || !(TERNM_PAGE_SIZE_CAP & (1ull << shift))))
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, page_shift));
		if (length && iova + length < iova)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, length));
	} else {
		uint64_t psize, need;

		if (shift < 12 || shift > 63 || !(TERNM_PAGE_SIZE_CAP & (1ull << shift)))
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, page_shift));
		if (length == 0 || length > TERNM_MAX_MR_SIZE)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, length));
		if (iova + length < iova)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, iova));
		psize = 1ull << shift;
		need = ((iova & (psize - 1)) + length + psize - 1) >> shift;
		if (npages == 0 || npages > TERNM_MAX_MR_PAGES || npages != need)
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, npages));
	}
	return TERN_CMD_OK;
}

/* The parameters of CREATE_MR @in: TERN_CMD_OK, or the refusal (the offset of the field). */
static int mr_check(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_create_mr_in T;
	const uint32_t known = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			       TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC |
			       TERN_ACCESS_MW_BIND;
	uint32_t pdn = get_le32(CFLD(in, T, pdn));
	uint8_t flags = in[offsetof(T, flags)];

	if (pdn >= TERNM_MAX_PD || !m->rdma->pd[pdn].used)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, pdn));
	if (get_le32(CFLD(in, T, access)) & ~known)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, access));
	/* one kind at most: a plain MR (0), PHYSICAL, FAST_REG, a window of type 1 or 2 */
	if ((flags & ~(uint8_t)(TERN_MR_F_PHYSICAL | TERN_MR_F_FAST_REG | MW_FLAGS)) ||
	    (flags & (flags - 1)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, flags));
	if (in[offsetof(T, rsvd0)])
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd0));
	return mr_check_kind(in, flags, r);
}

/*
 * Read the page list of a plain MR (@npages addresses of pages of 2^@shift bytes, at the
 * memory descriptor @pbl) once, each checked as it comes in, into *@pages (charged with
 * mr_pages_bytes()). TERN_CMD_OK, or the failure.
 */
static int mr_read_pages(struct tern_model *m, const uint8_t *pbl, uint32_t npages, uint8_t shift,
			 struct ternm_cmd_result *r, uint64_t **pages)
{
	typedef struct tern_cmd_create_mr_in T;
	struct ternm_mem mem;
	uint32_t bad_off, i;
	uint8_t *raw;
	int rc;

	rc = ternm_mem_init(m, &mem, pbl, (uint64_t)npages * 8, &bad_off);
	if (rc != TERN_CMD_OK)
		return ternm_refuse(r, rc, rc == TERN_CMD_BAD_PARAM ? offsetof(T, pbl) + bad_off : 0);
	if (!ternm_host_mem_charge(m, mr_pages_bytes(npages))) {
		ternm_mem_free(m, &mem);
		return TERN_CMD_NO_RESOURCES;
	}
	*pages = malloc((size_t)npages * sizeof(**pages));
	raw = malloc((size_t)npages * 8);
	rc = !*pages || !raw ? TERN_CMD_NO_RESOURCES :
	     ternm_mem_read(m, &mem, 0, raw, (size_t)npages * 8) ? TERN_CMD_DMA_ERROR : TERN_CMD_OK;
	ternm_mem_free(m, &mem);
	for (i = 0; rc == TERN_CMD_OK && i < npages; i++) {
		uint64_t pa = get_le64(raw + 8 * (size_t)i);

		if (pa == 0 || (pa & ((1ull << shift) - 1)) || pa + (1ull << shift) - 1 < pa)
			rc = ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, pbl));
		else
			(*pages)[i] = pa;
	}
	free(raw);
	if (rc != TERN_CMD_OK) {
		free(*pages);
		*pages = NULL;
		ternm_host_mem_release(m, mr_pages_bytes(npages));
	}
	return rc;
}

/*
 * Check a struct tern_cmd_create_mr_in and build the MR it describes into @out (its page
 * list read and charged to the host memory), without taking an index: CREATE_MR and
 * REREG_MR. @room: an index is free for it; @pages_free: page list entries left in the
 * device's budget. Returns a command status; nothing is held unless it is TERN_CMD_OK.
 */
static int mr_prepare(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r,
		      bool room, uint32_t pages_free, struct ternm_mr *out)
{
	typedef struct tern_cmd_create_mr_in T;
	uint8_t flags = in[offsetof(T, flags)];
	uint32_t npages = get_le32(CFLD(in, T, npages));
	uint64_t *pages = NULL;
	int rc;

	rc = mr_check(m, in, r);
	if (rc != TERN_CMD_OK)
		return rc;
	if (!room || npages > pages_free)
		return TERN_CMD_NO_RESOURCES;
	if (flags & TERN_MR_F_FAST_REG) {
		if (!ternm_host_mem_charge(m, mr_pages_bytes(npages)))
			return TERN_CMD_NO_RESOURCES;
		pages = calloc(npages, sizeof(*pages));
		if (!pages) {
			ternm_host_mem_release(m, mr_pages_bytes(npages));
			return TERN_CMD_NO_RESOURCES;
		}
	} else if (!(flags & (TERN_MR_F_PHYSICAL | MW_FLAGS))) {
		rc = mr_read_pages(m, CFLD(in, T, pbl), npages, in[offsetof(T, page_shift)], r,
				   &pages);
		if (rc != TERN_CMD_OK)
			return rc;
	}
	memset(out, 0, sizeof(*out));
	out->used = true;
	/* fast registration: free at first; a window: unbound */
	out->valid = !(flags & (TERN_MR_F_FAST_REG | MW_FLAGS));
	out->key = in[offsetof(T, key)];
	out->flags = flags;
	out->page_shift = in[offsetof(T, page_shift)];
	out->pdn = get_le32(CFLD(in, T, pdn));
	out->access = get_le32(CFLD(in, T, access));
	out->iova = get_le64(CFLD(in, T, iova));
	out->length = get_le64(CFLD(in, T, length));
	out->npages = flags & TERN_MR_F_FAST_REG ? 0 : npages;
	out->max_pages = npages;
	out->pages = pages;
	return TERN_CMD_OK;
}

/* CREATE_MR. Returns a command status; r->result is the MR index. */
int ternm_mr_create(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	struct ternm_rdma *rd = m->rdma;
	struct ternm_mr *mr = NULL, tmp;
	uint32_t i, idx = 0;
	int rc;

	for (i = 0; i < TERNM_MAX_MR; i++) {
		uint32_t k = (rd->next_mr + i) % TERNM_MAX_MR;

		if (!rd->mr[k].used) {
			mr = &rd->mr[k];
			idx = k;
			break;
		}
	}
	rc = mr_prepare(m, in, r, mr != NULL, TERNM_TOTAL_MR_PAGES - rd->mr_pages, &tmp);
	if (rc != TERN_CMD_OK)
		return rc;
	*mr = tmp;
	rd->pd[mr->pdn].refs++;
	rd->mr_pages += mr->max_pages;
	rd->next_mr = (idx + 1) % TERNM_MAX_MR;
	r->result = idx;
	return TERN_CMD_OK;
}

/* A bound window lets go of its MR (and is unbound); nothing for anything else. */
static void mw_unbind(struct tern_model *m, struct ternm_mr *mw)
{
	struct ternm_mr *mr;

	if (!is_mw(mw) || !mw->valid)
		return;
	mr = mr_slot(m, mw->parent_key);
	if (mr && mr->binds)
		mr->binds--;
	mw->valid = false;
}

static void mr_free(struct tern_model *m, struct ternm_mr *mr)
{
	m->rdma->pd[mr->pdn].refs--;
	m->rdma->mr_pages -= mr->max_pages;
	if (mr->pages)
		ternm_host_mem_release(m, mr_pages_bytes(mr->max_pages));
	free(mr->pages);
	memset(mr, 0, sizeof(*mr));
}

/*
 * REREG_MR: the MR @key names (a valid plain MR, key byte matching) becomes the one the
 * embedded CREATE_MR input describes, with the same index and key byte (mr.key must be it).
 * The new page list is read and charged before the old one is let go; on any error the MR
 * is as it was. BAD_STATE while windows are bound to it.
 */
int ternm_mr_rereg(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_rereg_mr_in T;
	uint32_t key = get_le32(CFLD(in, T, key));
	const uint8_t *mi = CFLD(in, T, mr);
	struct ternm_mr *mr = mr_get(m, key), tmp;
	unsigned int i;
	int rc;

	if (!mr)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, key));
	if (mr->flags)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, key));
	for (i = 0; i < sizeof(((T *)0)->rsvd); i++)
		if (in[offsetof(T, rsvd) + i])
			return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd) + i);
	if (mi[offsetof(struct tern_cmd_create_mr_in, flags)])
		return ternm_refuse(r, TERN_CMD_BAD_PARAM,
				    offsetof(T, mr) + offsetof(struct tern_cmd_create_mr_in, flags));
	if (mi[offsetof(struct tern_cmd_create_mr_in, key)] != (uint8_t)key)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM,
				    offsetof(T, mr) + offsetof(struct tern_cmd_create_mr_in, key));
	if (mr->binds)
		return ternm_refuse(r, TERN_CMD_BAD_STATE, offsetof(T, key));
	rc = mr_prepare(m, mi, r, true,
			TERNM_TOTAL_MR_PAGES - m->rdma->mr_pages + mr->max_pages, &tmp);
	if (rc != TERN_CMD_OK) {
		if (rc == TERN_CMD_BAD_PARAM || rc == TERN_CMD_BAD_RESOURCE)
			r->syndrome += offsetof(T, mr);	/* the field's offset in this input */
		return rc;
	}
	mr_free(m, mr);
	*mr = tmp;
	m->rdma->pd[mr->pdn].refs++;
	m->rdma->mr_pages += mr->max_pages;
	return TERN_CMD_OK;
}

/*
 * DESTROY_MR: by full key; a FAST_REG MR or a window by its index alone, registered or free,
 * bound or not. An MR that windows are bound to is BAD_STATE.
 */
int ternm_mr_destroy(struct tern_model *m, const uint8_t *in, struct ternm_cmd_result *r)
{
	uint32_t key = get_le32(CFLD(in, struct tern_cmd_destroy_mr_in, key));
	struct ternm_mr *mr = mr_slot(m, key);

	if (!mr || (!(mr->flags & (TERN_MR_F_FAST_REG | MW_FLAGS)) && !mr_get(m, key)))
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE,
				    offsetof(struct tern_cmd_destroy_mr_in, key));
	if (mr->binds)
		return ternm_refuse(r, TERN_CMD_BAD_STATE,
				    offsetof(struct tern_cmd_destroy_mr_in, key));
	mw_unbind(m, mr);
	mr_free(m, mr);
	return TERN_CMD_OK;
}

/* Device reset: every MR goes. */
void ternm_mr_clear(struct tern_model *m)
{
	struct ternm_rdma *r = m->rdma;
	unsigned int i;

	for (i = 0; i < TERNM_MAX_MR; i++)
		if (r->mr[i].used)
			mr_free(m, &r->mr[i]);
	r->next_mr = 0;
	r->mr_pages = 0;
}

/* ---- fast registration and invalidation ----------------------------------------------------- */

/*
 * Execute a REG_MR WQE of @qp: @key is the header's rkey, @seg the struct tern_reg_mr_seg
 * after the header. Returns 0, or a CQE status with *synd set; the MR is unchanged then.
 */
int ternm_mr_fast_reg(struct tern_model *m, const struct ternm_qp *qp, uint32_t key,
		      const uint8_t *seg, uint8_t *synd)
{
	typedef struct tern_reg_mr_seg S;
	const uint32_t known = TERN_ACCESS_LOCAL_WRITE | TERN_ACCESS_REMOTE_WRITE |
			       TERN_ACCESS_REMOTE_READ | TERN_ACCESS_REMOTE_ATOMIC;
	uint64_t iova = get_le64(CFLD(seg, S, iova));
	uint64_t length = get_le64(CFLD(seg, S, length));
	uint64_t pbl = get_le64(CFLD(seg, S, pbl_addr));
	uint32_t npages = get_le32(CFLD(seg, S, npages));
	uint8_t shift = seg[offsetof(S, page_shift)];
	uint8_t access = seg[offsetof(S, access)];
	struct ternm_mr *mr = mr_slot(m, key);
	uint8_t raw[64 * 8];
	uint64_t psize;
	uint32_t i, done;

	*synd = TERN_SYND_LKEY;
	if (!mr || !(mr->flags & TERN_MR_F_FAST_REG))
		return TERN_CQE_LOC_PROT_ERR;
	*synd = TERN_SYND_PD;
	if (mr->pdn != qp->pdn)
		return TERN_CQE_LOC_PROT_ERR;
	*synd = TERN_SYND_MR_STATE;
	if (mr->valid)
		return TERN_CQE_LOC_PROT_ERR;
	*synd = TERN_SYND_BAD_REG;
	if (npages == 0 || npages > mr->max_pages || shift < TERN_MEM_MIN_PAGE_SHIFT ||
	    shift > TERN_MEM_MAX_PAGE_SHIFT || !(TERNM_PAGE_SIZE_CAP & (1ull << shift)) ||
	    length == 0 || length > TERNM_MAX_MR_SIZE || iova + length < iova ||
	    (access & ~known) || seg[offsetof(S, rsvd)] || seg[offsetof(S, rsvd) + 1] ||
	    ((access & (TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & TERN_ACCESS_LOCAL_WRITE)) || (pbl & 7))
		return TERN_CQE_LOC_QP_OP_ERR;
	psize = 1ull << shift;
	if ((iova & (psize - 1)) + length > (uint64_t)npages << shift)
		return TERN_CQE_LOC_QP_OP_ERR;
	/* the MR is free: nothing reads its page list, which is filled in place */
	for (done = 0; done < npages; ) {
		uint32_t n = npages - done < 64 ? npages - done : 64;

		if (ternm_dma_read(m, pbl + (uint64_t)done * 8, raw, (size_t)n * 8))
			return TERN_CQE_LOC_QP_OP_ERR;
		for (i = 0; i < n; i++) {
			uint64_t pa = get_le64(raw + 8 * (size_t)i);

			if (pa == 0 || (pa & (psize - 1)) || pa + psize - 1 < pa)
				return TERN_CQE_LOC_QP_OP_ERR;
			mr->pages[done + i] = pa;
		}
		done += n;
	}
	mr->npages = npages;
	mr->page_shift = shift;
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	mr->key = (uint8_t)key;
	mr->valid = true;
	*synd = 0;
	return 0;
}

/*
 * Invalidate @key for a QP of @pdn (LOCAL_INV, or a peer's SEND with invalidate): a FAST_REG
 * MR of that PD whose key byte matches becomes free. Returns 0 or the syndrome.
 */
int ternm_mr_invalidate(struct tern_model *m, uint32_t pdn, uint32_t key)
{
	struct ternm_mr *mr = mr_slot(m, key);

	if (!mr || !(mr->flags & (TERN_MR_F_FAST_REG | TERN_MR_F_MW_TYPE2)) ||
	    mr->key != (uint8_t)key)
		return TERN_SYND_LKEY;
	if (mr->pdn != pdn)
		return TERN_SYND_PD;
	if (mr->binds)
		return TERN_SYND_MR_STATE;	/* windows are bound to it */
	if (is_mw(mr))
		mw_unbind(m, mr);
	else
		mr->valid = false;
	return 0;
}

/*
 * Execute a BIND_MW WQE of @qp: @key is the window's new key (the header's rkey), @seg the
 * struct tern_bind_mw_seg. Returns 0, or TERN_CQE_MW_BIND_ERR with *synd set; the window is
 * unchanged then.
 */
int ternm_mw_bind(struct tern_model *m, const struct ternm_qp *qp, uint32_t key,
		  const uint8_t *seg, uint8_t *synd)
{
	typedef struct tern_bind_mw_seg S;
	uint64_t addr = get_le64(CFLD(seg, S, addr));
	uint64_t len = get_le64(CFLD(seg, S, length));
	uint32_t mr_key = get_le32(CFLD(seg, S, mr_key));
	uint8_t access = seg[offsetof(S, access)];
	struct ternm_mr *mw = mr_slot(m, key), *mr;
	unsigned int i;

	*synd = TERN_SYND_LKEY;
	if (!mw || !is_mw(mw))
		return TERN_CQE_MW_BIND_ERR;
	*synd = TERN_SYND_PD;
	if (mw->pdn != qp->pdn)
		return TERN_CQE_MW_BIND_ERR;
	*synd = TERN_SYND_MR_STATE;
	if ((mw->flags & TERN_MR_F_MW_TYPE2) && mw->valid)
		return TERN_CQE_MW_BIND_ERR;	/* type 2: invalidate first */
	*synd = TERN_SYND_BAD_REG;
	for (i = 0; i < sizeof(S) - offsetof(S, rsvd); i++)
		if (seg[offsetof(S, rsvd) + i])
			return TERN_CQE_MW_BIND_ERR;
	if ((access & ~REMOTE_ANY) || addr + len < addr ||
	    (!len && (mw->flags & TERN_MR_F_MW_TYPE2)))
		return TERN_CQE_MW_BIND_ERR;
	if (!len && (mw->flags & TERN_MR_F_MW_TYPE1)) {
		mw_unbind(m, mw);		/* type 1, length 0: unbind */
		mw->key = (uint8_t)key;
		*synd = 0;
		return 0;
	}
	mr = mr_get(m, mr_key);
	*synd = TERN_SYND_LKEY;
	if (!mr || mr == mw)
		return TERN_CQE_MW_BIND_ERR;
	*synd = TERN_SYND_PD;
	if (mr->pdn != qp->pdn)
		return TERN_CQE_MW_BIND_ERR;
	*synd = TERN_SYND_ACCESS;
	if (!(mr->access & TERN_ACCESS_MW_BIND) ||
	    ((access & (TERN_ACCESS_REMOTE_WRITE | TERN_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & TERN_ACCESS_LOCAL_WRITE)))
		return TERN_CQE_MW_BIND_ERR;
	*synd = TERN_SYND_BOUNDS;
	if (!in_range(mr, addr, len))
		return TERN_CQE_MW_BIND_ERR;
	mw_unbind(m, mw);		/* type 1 bound again */
	mw->key = (uint8_t)key;
	mw->iova = addr;
	mw->length = len;
	mw->access = access;
	mw->parent_key = mr_key;
	mw->qpn = qp->qpn;
	mw->valid = true;
	mr->binds++;
	*synd = 0;
	return 0;
}

/*
 * QP @qpn is being destroyed: the type 2 windows bound through it are unbound. No peer can
 * reach them any more (a type 2 window answers only its QP's connection), and the QPN may
 * name another QP later, which must not inherit them. The windows let go of their MRs and
 * may be bound again.
 */
void ternm_mw_qp_gone(struct tern_model *m, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < TERNM_MAX_MR; i++) {
		struct ternm_mr *mw = &m->rdma->mr[i];

		if (mw->used && (mw->flags & TERN_MR_F_MW_TYPE2) && mw->valid && mw->qpn == qpn)
			mw_unbind(m, mw);
	}
}

/*
 * A REG_MR or LOCAL_INV naming @key was flushed (its QP, of @pdn, is in error): the MR its
 * index names is left free whatever its key byte, so that software may register it again
 * (a REG_MR that ran before the flush is undone; the WQE completed in error).
 */
void ternm_mr_flush_key(struct tern_model *m, uint32_t pdn, uint32_t key)
{
	struct ternm_mr *mr = mr_slot(m, key);

	if (mr && (mr->flags & TERN_MR_F_FAST_REG) && mr->pdn == pdn)
		mr->valid = false;
}

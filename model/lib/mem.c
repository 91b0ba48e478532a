/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host memory described by a struct tern_mem_desc: validation at object creation, then
 * bounds-checked reads and writes at offsets inside the object.
 *
 * Rules (decided here, see Documentation/hw/):
 *  - rsvd must be 0, mode DIRECT or PAGE_LIST, page_shift 12..30;
 *  - npages must be exactly the number of pages the object needs (size rounded up to pages);
 *    RDMA queues (CQ, SQ, RQ) may name more (up to 2^20), only the first ones are used;
 *  - DIRECT: addr non-zero, 64-byte aligned, addr + size does not wrap;
 *  - PAGE_LIST: addr (the list) non-zero and 8-byte aligned; every page address non-zero,
 *    aligned to the page size and not wrapping. The list is read once, at creation, into an
 *    array the model allocates (freed by ternm_mem_free), counted in the device's host memory
 *    (ternm_host_mem_charge(): NO_RESOURCES past the bound); a fault reading it is DMA_ERROR.
 *  - an object is at most TERNM_MEM_MAX_SIZE bytes (the deepest CQ, 128 MiB, and its CI
 *    record; the other rings are at most 16 MiB).
 * A BAD_PARAM reports the byte offset of the offending field inside the descriptor.
 */
#include "tern_model_int.h"

#include <stdlib.h>

_Static_assert(TERNM_MEM_MAX_SIZE >= (16u << TERNM_MAX_EQ_LOG), "largest EQ");
_Static_assert(TERNM_MEM_MAX_SIZE >= (16u << TERNM_MAX_ETH_LOG), "largest Ethernet ring");

void ternm_mem_free(struct tern_model *m, struct ternm_mem *mem)
{
	if (mem->pages)
		ternm_host_mem_release(m, (uint64_t)mem->npages * sizeof(uint64_t));
	free(mem->pages);
	memset(mem, 0, sizeof(*mem));
}

int ternm_mem_init(struct tern_model *m, struct ternm_mem *mem, const uint8_t *desc, uint64_t size,
		uint32_t *bad_off)
{
	return ternm_mem_init_ex(m, mem, desc, size, false, bad_off);
}

/* With @at_least, the descriptor may name more pages than needed (the rest are ignored). */
int ternm_mem_init_ex(struct tern_model *m, struct ternm_mem *mem, const uint8_t *desc,
		      uint64_t size, bool at_least, uint32_t *bad_off)
{
	uint64_t addr = get_le64(CFLD(desc, struct tern_mem_desc, addr));
	uint32_t npages = get_le32(CFLD(desc, struct tern_mem_desc, npages));
	uint8_t shift = desc[offsetof(struct tern_mem_desc, page_shift)];
	uint8_t mode = desc[offsetof(struct tern_mem_desc, mode)];
	uint16_t rsvd = get_le16(CFLD(desc, struct tern_mem_desc, rsvd));
	uint64_t page_size, needed;
	uint8_t *list;
	uint32_t i;

	memset(mem, 0, sizeof(*mem));
	if (rsvd) {
		*bad_off = offsetof(struct tern_mem_desc, rsvd);
		return TERN_CMD_BAD_PARAM;
	}
	if (mode != TERN_MEM_DIRECT && mode != TERN_MEM_PAGE_LIST) {
		*bad_off = offsetof(struct tern_mem_desc, mode);
		return TERN_CMD_BAD_PARAM;
	}
	if (shift < TERN_MEM_MIN_PAGE_SHIFT || shift > TERN_MEM_MAX_PAGE_SHIFT) {
		*bad_off = offsetof(struct tern_mem_desc, page_shift);
		return TERN_CMD_BAD_PARAM;
	}
	page_size = 1ull << shift;
	needed = (size + page_size - 1) >> shift;
	if (size == 0 || size > TERNM_MEM_MAX_SIZE || npages < needed ||
	    (!at_least && npages != needed) || npages > (1u << 20)) {
		*bad_off = offsetof(struct tern_mem_desc, npages);
		return TERN_CMD_BAD_PARAM;
	}
	npages = (uint32_t)needed;
	*bad_off = offsetof(struct tern_mem_desc, addr);
	if (mode == TERN_MEM_DIRECT) {
		if (addr == 0 || (addr & 63) || addr + size < addr)
			return TERN_CMD_BAD_PARAM;
	} else {
		if (addr == 0 || (addr & 7))
			return TERN_CMD_BAD_PARAM;
		if (!ternm_host_mem_charge(m, (uint64_t)npages * sizeof(uint64_t)))
			return TERN_CMD_NO_RESOURCES;
		list = malloc((size_t)npages * 8);
		mem->pages = malloc((size_t)npages * sizeof(uint64_t));
		mem->npages = npages;		/* what ternm_mem_free() gives back */
		if (!list || !mem->pages) {
			free(list);
			if (!mem->pages)
				ternm_host_mem_release(m, (uint64_t)npages * sizeof(uint64_t));
			ternm_mem_free(m, mem);
			return TERN_CMD_NO_RESOURCES;
		}
		if (ternm_dma_read(m, addr, list, (size_t)npages * 8)) {
			free(list);
			ternm_mem_free(m, mem);
			return TERN_CMD_DMA_ERROR;
		}
		for (i = 0; i < npages; i++) {
			uint64_t pa = get_le64(list + 8 * i);

			if (pa == 0 || (pa & (page_size - 1)) || pa + page_size - 1 < pa) {
				free(list);
				ternm_mem_free(m, mem);
				return TERN_CMD_BAD_PARAM;
			}
			mem->pages[i] = pa;
		}
		free(list);
	}
	mem->size = size;
	mem->mode = mode;
	mem->page_shift = shift;
	mem->npages = npages;
	mem->base = addr;
	return TERN_CMD_OK;
}

/* Exactly one of @rbuf (read) and @wbuf (write) is non-NULL. */
static int mem_access(struct tern_model *m, const struct ternm_mem *mem, uint64_t off,
		      uint8_t *rbuf, const uint8_t *wbuf, size_t len)
{
	bool write = wbuf != NULL;

	if (mem->size == 0 || off > mem->size || len > mem->size - off)
		return -1;
	if (mem->mode == TERN_MEM_DIRECT)
		return write ? ternm_dma_write(m, mem->base + off, wbuf, len)
			     : ternm_dma_read(m, mem->base + off, rbuf, len);

	while (len) {
		uint64_t page_size = 1ull << mem->page_shift;
		uint64_t idx = off >> mem->page_shift;
		uint64_t in_page = off & (page_size - 1);
		size_t chunk = len;
		int rc;

		if (idx >= mem->npages)
			return -1;
		if (chunk > page_size - in_page)
			chunk = (size_t)(page_size - in_page);
		if (write) {
			rc = ternm_dma_write(m, mem->pages[idx] + in_page, wbuf, chunk);
			wbuf += chunk;
		} else {
			rc = ternm_dma_read(m, mem->pages[idx] + in_page, rbuf, chunk);
			rbuf += chunk;
		}
		if (rc)
			return rc;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

int ternm_mem_read(struct tern_model *m, const struct ternm_mem *mem, uint64_t off, void *buf,
		size_t len)
{
	return mem_access(m, mem, off, buf, NULL, len);
}

int ternm_mem_write(struct tern_model *m, const struct ternm_mem *mem, uint64_t off, const void *buf,
		 size_t len)
{
	return mem_access(m, mem, off, NULL, buf, len);
}

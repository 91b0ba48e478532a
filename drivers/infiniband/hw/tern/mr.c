// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: memory regions, and the pinned user memory of rings.
 *
 * A user MR is pinned with ib_umem_get() and cut into the largest pages the device takes
 * (page_size_cap) that fit the mapping. The page addresses go to CREATE_MR in a DMA buffer:
 * one contiguous buffer (TERN_MEM_DIRECT) while the list fits in TERN_IB_PBL_DIRECT_MAX
 * bytes, otherwise 4 KiB chunk pages whose addresses are listed in a contiguous buffer
 * (TERN_MEM_PAGE_LIST). The device copies the list while it runs the command, so the list
 * is freed right after it.
 *
 * A dma-buf MR (ibv_reg_dmabuf_mr) attaches the dma-buf pinned and hands the DMA addresses
 * of its mapping to the device the same way; the attachment lasts as long as the MR.
 *
 * A fast-registration MR (ib_alloc_mr) owns a coherent page list that .map_mr_sg fills and
 * IB_WR_REG_MR work requests hand to the device (struct tern_reg_mr_seg).
 *
 * Ring memory (CQs, QPs) is described in 4 KiB pages: TERN_MEM_DIRECT when the pages are
 * contiguous, otherwise a TERN_MEM_PAGE_LIST of their addresses.
 */

#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <rdma/iter.h>
#include <rdma/restrack.h>

#include "tern_ib.h"

#define TERN_IB_PBL_DIRECT_MAX	SZ_4K	/* bytes of page list kept in one buffer */
#define TERN_IB_PBL_PER_CHUNK	(SZ_4K / sizeof(__le64))

#define TERN_IB_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)

/*
 * The access flags an MR may have: remote atomics only on a device with atomics, window
 * binding only on a device with windows. The optional range (IB_ACCESS_OPTIONAL) holds
 * hints a device may ignore, among them IB_ACCESS_RELAXED_ORDERING: tern's DMA is ordered
 * anyway, so it is accepted and ignored.
 */
static bool tern_ib_mr_access_ok(struct tern_ib_dev *dev, int access)
{
	int ok = TERN_IB_MR_ACCESS | IB_ACCESS_OPTIONAL;

	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_ATOMIC))
		ok |= IB_ACCESS_REMOTE_ATOMIC;
	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_MW))
		ok |= IB_ACCESS_MW_BIND;
	return !(access & ~ok);
}

/* An MR's rights for the device: the QP's rights, and whether windows may be bound. */
static u32 tern_ib_mr_access_to_hw(int access)
{
	return tern_ib_access_to_hw(access) |
	       (access & IB_ACCESS_MW_BIND ? TERN_ACCESS_MW_BIND : 0);
}

/**
 * tern_ib_dma_buf_alloc() - allocate a zeroed coherent DMA buffer
 * @dev: the device
 * @buf: output
 * @size: bytes (rounded up to whole pages)
 *
 * Sleeps.
 *
 * Return: 0 or -ENOMEM.
 */
int tern_ib_dma_buf_alloc(struct tern_ib_dev *dev, struct tern_ib_dma_buf *buf, size_t size)
{
	buf->size = PAGE_ALIGN(size);
	buf->va = dma_alloc_coherent(tern_ib_dma_dev(dev), buf->size, &buf->dma, GFP_KERNEL);
	return buf->va ? 0 : -ENOMEM;
}

/**
 * tern_ib_dma_buf_free() - free a buffer of tern_ib_dma_buf_alloc(), if allocated
 * @dev: the device
 * @buf: the buffer
 */
void tern_ib_dma_buf_free(struct tern_ib_dev *dev, struct tern_ib_dma_buf *buf)
{
	if (buf->va)
		dma_free_coherent(tern_ib_dma_dev(dev), buf->size, buf->va, buf->dma);
	buf->va = NULL;
}

/**
 * tern_ib_dma_buf_desc() - describe a coherent buffer for a command: one contiguous region
 * @buf: the buffer (whole pages)
 * @desc: output
 */
void tern_ib_dma_buf_desc(const struct tern_ib_dma_buf *buf, struct tern_mem_desc *desc)
{
	memset(desc, 0, sizeof(*desc));
	desc->addr = cpu_to_le64(buf->dma);
	desc->npages = cpu_to_le32(buf->size >> TERN_MEM_MIN_PAGE_SHIFT);
	desc->page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	desc->mode = TERN_MEM_DIRECT;
}

static void tern_ib_pbl_free(struct tern_ib_dev *dev, struct tern_ib_pbl *pbl)
{
	u32 i;

	for (i = 0; i < pbl->nchunks; i++)
		tern_ib_dma_buf_free(dev, &pbl->chunks[i]);
	kfree(pbl->chunks);
	pbl->chunks = NULL;
	pbl->nchunks = 0;
	tern_ib_dma_buf_free(dev, &pbl->list);
}

/* Build the page list of @npages blocks of @pgsz bytes of @umem. */
static int tern_ib_pbl_build(struct tern_ib_dev *dev, struct tern_ib_pbl *pbl,
			     struct ib_umem *umem, unsigned long pgsz, u32 npages)
{
	size_t bytes = (size_t)npages * sizeof(__le64);
	struct ib_block_iter biter;
	__le64 *list;
	u32 i, k = 0;
	int err;

	memset(pbl, 0, sizeof(*pbl));
	if (bytes <= TERN_IB_PBL_DIRECT_MAX) {
		err = tern_ib_dma_buf_alloc(dev, &pbl->list, bytes);
		if (err)
			return err;
		list = pbl->list.va;
		rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
			if (k == npages)
				break;
			list[k++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
		}
		pbl->desc.addr = cpu_to_le64(pbl->list.dma);
		pbl->desc.npages = cpu_to_le32(pbl->list.size >> TERN_MEM_MIN_PAGE_SHIFT);
		pbl->desc.page_shift = TERN_MEM_MIN_PAGE_SHIFT;
		pbl->desc.mode = TERN_MEM_DIRECT;
		return 0;
	}

	pbl->nchunks = DIV_ROUND_UP(npages, TERN_IB_PBL_PER_CHUNK);
	pbl->chunks = kcalloc(pbl->nchunks, sizeof(*pbl->chunks), GFP_KERNEL);
	if (!pbl->chunks) {
		pbl->nchunks = 0;
		return -ENOMEM;
	}
	err = tern_ib_dma_buf_alloc(dev, &pbl->list, pbl->nchunks * sizeof(__le64));
	if (err)
		goto err_free;
	list = pbl->list.va;
	for (i = 0; i < pbl->nchunks; i++) {
		err = tern_ib_dma_buf_alloc(dev, &pbl->chunks[i], SZ_4K);
		if (err)
			goto err_free;
		list[i] = cpu_to_le64(pbl->chunks[i].dma);
	}
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		__le64 *chunk;

		if (k == npages)
			break;
		chunk = pbl->chunks[k / TERN_IB_PBL_PER_CHUNK].va;
		chunk[k % TERN_IB_PBL_PER_CHUNK] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
		k++;
	}
	pbl->desc.addr = cpu_to_le64(pbl->list.dma);
	pbl->desc.npages = cpu_to_le32(pbl->nchunks);
	pbl->desc.page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	pbl->desc.mode = TERN_MEM_PAGE_LIST;
	return 0;

err_free:
	tern_ib_pbl_free(dev, pbl);
	return err;
}

/**
 * tern_ib_queue_mem_get() - pin a ring in user memory and describe it for the device
 * @dev: the device
 * @qm: output; on error nothing is held
 * @va: start of the ring in the caller's address space; page aligned
 * @len: bytes the caller says it allocated
 * @need: bytes the device will access (@len must cover them)
 *
 * Return: 0, -EINVAL for a bad address or length, or another negative errno.
 */
int tern_ib_queue_mem_get(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm, u64 va,
			  u64 len, size_t need)
{
	struct ib_block_iter biter;
	dma_addr_t first = 0, next = 0;
	bool contiguous = true;
	size_t npages;
	__le64 *list;
	u32 k = 0;
	int err;

	memset(qm, 0, sizeof(*qm));
	if (!va || !PAGE_ALIGNED(va) || len < need || !need) {
		ibdev_dbg(&dev->ibdev, "bad ring buffer %#llx, %llu bytes (%zu needed)\n", va,
			  len, need);
		return -EINVAL;
	}
	qm->umem = ib_umem_get(&dev->ibdev, va, need, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(qm->umem)) {
		err = PTR_ERR(qm->umem);
		qm->umem = NULL;
		return err;
	}
	npages = ib_umem_num_dma_blocks(qm->umem, SZ_4K);
	if (npages > U32_MAX / sizeof(__le64)) {
		err = -EINVAL;
		goto err_release;
	}
	rdma_umem_for_each_dma_block(qm->umem, &biter, SZ_4K) {
		dma_addr_t a = rdma_block_iter_dma_address(&biter);

		if (!k)
			first = a;
		else if (a != next)
			contiguous = false;
		next = a + SZ_4K;
		k++;
	}
	qm->desc.npages = cpu_to_le32(npages);
	qm->desc.page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	if (contiguous) {
		qm->desc.addr = cpu_to_le64(first);
		qm->desc.mode = TERN_MEM_DIRECT;
		return 0;
	}

	err = tern_ib_dma_buf_alloc(dev, &qm->pbl, npages * sizeof(__le64));
	if (err)
		goto err_release;
	list = qm->pbl.va;
	k = 0;
	rdma_umem_for_each_dma_block(qm->umem, &biter, SZ_4K) {
		if (k == npages)
			break;
		list[k++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
	}
	qm->desc.addr = cpu_to_le64(qm->pbl.dma);
	qm->desc.mode = TERN_MEM_PAGE_LIST;
	return 0;

err_release:
	ib_umem_release(qm->umem);
	qm->umem = NULL;
	return err;
}

/**
 * tern_ib_queue_mem_done() - free the page list once the create command has run
 * @dev: the device
 * @qm: the ring memory (the pages stay pinned)
 */
void tern_ib_queue_mem_done(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm)
{
	tern_ib_dma_buf_free(dev, &qm->pbl);
}

/**
 * tern_ib_queue_mem_put() - release a ring's memory
 * @dev: the device
 * @qm: the ring memory
 * @hold: the device may still access it: keep the pages pinned until removal
 */
void tern_ib_queue_mem_put(struct tern_ib_dev *dev, struct tern_ib_queue_mem *qm, bool hold)
{
	tern_ib_dma_buf_free(dev, &qm->pbl);
	if (hold)
		tern_ib_zombie_add(dev, qm->umem);
	else
		ib_umem_release(qm->umem);
	qm->umem = NULL;
}

static u8 tern_ib_next_key(struct tern_ib_dev *dev)
{
	return (u8)atomic_inc_return(&dev->mr_key);
}

/* CREATE_MR (an MR or a window) with a new key byte; *@key: the full key. */
static int tern_ib_create_key(struct tern_ib_dev *dev, struct tern_cmd_create_mr_in *in,
			      u32 *key)
{
	u32 idx;
	int err;

	in->key = tern_ib_next_key(dev);
	err = tern_ib_cmd(dev, TERN_CMD_CREATE_MR, in, sizeof(*in), NULL, 0, &idx);
	if (err)
		return err;
	*key = idx << 8 | in->key;
	if (idx >= le32_to_cpu(dev->caps.max_mr) || idx > (U32_MAX >> 8)) {
		struct tern_cmd_destroy_mr_in din = { .key = cpu_to_le32(*key) };

		ibdev_err(&dev->ibdev, "CREATE_MR returned index %u (limit %u)\n", idx,
			  le32_to_cpu(dev->caps.max_mr));
		tern_ib_cmd(dev, TERN_CMD_DESTROY_MR, &din, sizeof(din), NULL, 0, NULL);
		return -EIO;
	}
	return 0;
}

static int tern_ib_create_mr_cmd(struct tern_ib_dev *dev, struct tern_ib_mr *mr,
				 struct tern_cmd_create_mr_in *in)
{
	int err = tern_ib_create_key(dev, in, &mr->ibmr.lkey);

	mr->ibmr.rkey = mr->ibmr.lkey;
	return err;
}

/*
 * Describe the pinned @umem for an MR of @ibpd of @length bytes mapped at @iova with @access
 * in @in (all but the key byte): @pbl its page list (the caller frees it once the command
 * ran), *@npages its pages. @umem stays the caller's, also on error.
 */
static int tern_ib_umr_describe(struct tern_ib_dev *dev, struct ib_pd *ibpd,
				struct ib_umem *umem, u64 length, u64 iova, int access,
				struct tern_ib_pbl *pbl, struct tern_cmd_create_mr_in *in,
				u32 *npages)
{
	unsigned long pgsz, pgsz_bitmap;
	size_t n;
	int err;

	pgsz_bitmap = le64_to_cpu(dev->caps.page_size_cap) &
		      GENMASK_ULL(min(TERN_MEM_MAX_PAGE_SHIFT, BITS_PER_LONG - 1), PAGE_SHIFT);
	pgsz = ib_umem_find_best_pgsz(umem, pgsz_bitmap, iova);
	if (!pgsz) {
		ibdev_dbg(&dev->ibdev, "reg_mr: no page size of %#lx fits\n", pgsz_bitmap);
		return -EINVAL;
	}
	n = ib_umem_num_dma_blocks(umem, pgsz);
	if (n > le32_to_cpu(dev->caps.max_mr_pages)) {
		ibdev_dbg(&dev->ibdev, "reg_mr: %zu pages of %lu bytes, limit %u\n", n,
			  pgsz, le32_to_cpu(dev->caps.max_mr_pages));
		return -EINVAL;
	}
	err = tern_ib_pbl_build(dev, pbl, umem, pgsz, n);
	if (err)
		return err;

	memset(in, 0, sizeof(*in));
	in->pdn = cpu_to_le32(to_tpd(ibpd)->pdn);
	in->access = cpu_to_le32(tern_ib_mr_access_to_hw(access));
	in->iova = cpu_to_le64(iova);
	in->length = cpu_to_le64(length);
	in->page_shift = order_base_2(pgsz);
	in->npages = cpu_to_le32(n);
	in->pbl = pbl->desc;
	*npages = n;
	return 0;
}

/*
 * Create the MR @in describes (tern_ib_umr_describe()) on the device, free its page list
 * @pbl and record its layout of @npages pages and @access in @mr.
 */
static int tern_ib_umr_create(struct tern_ib_dev *dev, struct tern_ib_mr *mr,
			      struct tern_cmd_create_mr_in *in, struct tern_ib_pbl *pbl,
			      u32 npages, int access)
{
	int err = tern_ib_create_mr_cmd(dev, mr, in);

	tern_ib_pbl_free(dev, pbl);
	if (err)
		return err;
	mr->page_shift = in->page_shift;
	mr->npages = npages;
	mr->pbl_mode = in->pbl.mode;
	mr->access = access;
	return 0;
}

/*
 * Pin [@start, @start + @length) for an MR of @ibpd mapped at @iova with @access and describe
 * it in @in (all but the key byte): *@umemp the pinned memory, @pbl its page list (the
 * caller frees it once the command ran), *@npages its pages. Nothing is held on error.
 */
static int tern_ib_umr_prepare(struct tern_ib_dev *dev, struct ib_pd *ibpd, u64 start,
			       u64 length, u64 iova, int access, struct ib_umem **umemp,
			       struct tern_ib_pbl *pbl, struct tern_cmd_create_mr_in *in,
			       u32 *npages)
{
	struct ib_umem *umem;
	int err;

	if (!tern_ib_mr_access_ok(dev, access)) {
		ibdev_dbg(&dev->ibdev, "reg_mr: unsupported access %#x\n", access);
		return -EOPNOTSUPP;
	}
	if (!length || length > le64_to_cpu(dev->caps.max_mr_size))
		return -EINVAL;
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	err = tern_ib_umr_describe(dev, ibpd, umem, length, iova, access, pbl, in, npages);
	if (err) {
		ib_umem_release(umem);
		return err;
	}
	*umemp = umem;
	return 0;
}

/**
 * tern_ib_reg_user_mr() - register user memory
 * @ibpd: the PD
 * @start: start of the range in the caller's address space
 * @length: bytes, 1..max_mr_size
 * @iova: address the range has in work requests
 * @access: IB_ACCESS_* (remote atomics with TERN_RDMA_CAP_ATOMIC)
 * @udata: no driver data
 *
 * Return: the MR or an ERR_PTR(): -EOPNOTSUPP for unsupported access flags, -EINVAL for a
 * bad length or a range the device cannot map, -ENOSPC when the device has no MR left.
 */
struct ib_mr *tern_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				  int access, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct tern_cmd_create_mr_in in;
	struct tern_ib_pbl pbl;
	struct tern_ib_mr *mr;
	u32 npages;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = tern_ib_umr_prepare(dev, ibpd, start, length, iova, access, &mr->umem, &pbl, &in,
				  &npages);
	if (err)
		goto err_free;
	err = tern_ib_umr_create(dev, mr, &in, &pbl, npages, access);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * tern_ib_reg_user_mr_dmabuf() - register memory of a dma-buf
 * @ibpd: the PD
 * @offset: start of the range in the dma-buf
 * @length: bytes, 1..max_mr_size, within the dma-buf
 * @iova: address the range has in work requests (the RDMA core checked that it has the
 *	offset's place in a page)
 * @fd: the dma-buf's file descriptor
 * @access: IB_ACCESS_* as for tern_ib_reg_user_mr(); not IB_ACCESS_ON_DEMAND
 * @udata: no driver data
 *
 * The dma-buf is attached pinned: the exporter keeps its pages where they are until the
 * MR is destroyed, so the device is given their DMA addresses once, in the same page list
 * as a user MR's, and no move notification needs handling (the RDMA core's importer warns
 * should an exporter send one anyway). Deregistration unpins and detaches it.
 *
 * Return: the MR or an ERR_PTR(): -EOPNOTSUPP for unsupported access flags (on-demand
 * paging among them), -EINVAL for a bad length or a range beyond the dma-buf or one the
 * device cannot map, -EBADF for a closed @fd, -EINVAL for one that is not a dma-buf, the
 * exporter's errno when it cannot pin or map the buffer, -ENOSPC when the device has no MR
 * left.
 */
struct ib_mr *tern_ib_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset, u64 length,
					 u64 iova, int fd, int access,
					 struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct ib_umem_dmabuf *umem_dmabuf;
	struct tern_cmd_create_mr_in in;
	struct tern_ib_pbl pbl;
	struct tern_ib_mr *mr;
	u32 npages;
	int err;

	if (!tern_ib_mr_access_ok(dev, access) || (access & IB_ACCESS_ON_DEMAND)) {
		ibdev_dbg(&dev->ibdev, "reg_dmabuf_mr: unsupported access %#x\n", access);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!length || length > le64_to_cpu(dev->caps.max_mr_size))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	umem_dmabuf = ib_umem_dmabuf_get_pinned(ibpd->device, offset, length, fd, access);
	if (IS_ERR(umem_dmabuf)) {
		err = PTR_ERR(umem_dmabuf);
		ibdev_dbg(&dev->ibdev, "reg_dmabuf_mr: fd %d: %d\n", fd, err);
		goto err_free;
	}
	mr->umem = &umem_dmabuf->umem;
	err = tern_ib_umr_describe(dev, ibpd, mr->umem, length, iova, access, &pbl, &in,
				   &npages);
	if (err)
		goto err_release;
	err = tern_ib_umr_create(dev, mr, &in, &pbl, npages, access);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * tern_ib_get_dma_mr() - an MR over bus addresses, for kernel PDs
 * @ibpd: the PD
 * @access: IB_ACCESS_*
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *tern_ib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct tern_cmd_create_mr_in in = {};
	struct tern_ib_mr *mr;
	int err;

	if (!tern_ib_mr_access_ok(dev, access))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	in.pdn = cpu_to_le32(to_tpd(ibpd)->pdn);
	in.access = cpu_to_le32(tern_ib_mr_access_to_hw(access));
	in.flags = TERN_MR_F_PHYSICAL;
	in.page_shift = TERN_MEM_MIN_PAGE_SHIFT;
	err = tern_ib_create_mr_cmd(dev, mr, &in);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * tern_ib_alloc_mr() - an MR for fast registration (the kernel's storage ULPs use these)
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: pages one registration may map, 1..max_fast_reg_page_list_len
 *
 * The MR is created free (TERN_MR_F_FAST_REG): .map_mr_sg fills its page list and an
 * IB_WR_REG_MR work request hands it to the device with a key and rights; IB_WR_LOCAL_INV
 * or a peer's SEND with invalidate takes them away again.
 *
 * Return: the MR or an ERR_PTR(): -EOPNOTSUPP for another type or a device without
 * TERN_RDMA_CAP_MEM_MGT, -EINVAL for @max_num_sg out of range, -ENOSPC when the device
 * has no MR left.
 */
struct ib_mr *tern_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg)
{
	struct tern_ib_dev *dev = to_tibdev(ibpd->device);
	struct tern_cmd_create_mr_in in = {};
	struct tern_ib_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !tern_ib_has_cap(dev, TERN_RDMA_CAP_MEM_MGT))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > le32_to_cpu(dev->caps.max_fast_reg_pages))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = tern_ib_dma_buf_alloc(dev, &mr->fr_list, max_num_sg * sizeof(__le64));
	if (err)
		goto err_free;
	mr->fr_max = max_num_sg;
	in.pdn = cpu_to_le32(to_tpd(ibpd)->pdn);
	in.flags = TERN_MR_F_FAST_REG;
	in.npages = cpu_to_le32(max_num_sg);
	err = tern_ib_create_mr_cmd(dev, mr, &in);
	if (err)
		goto err_list;
	return &mr->ibmr;

err_list:
	tern_ib_dma_buf_free(dev, &mr->fr_list);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int tern_ib_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct tern_ib_mr *mr = to_tmr(ibmr);
	__le64 *list = mr->fr_list.va;

	if (mr->fr_n >= mr->fr_max)
		return -ENOMEM;
	list[mr->fr_n++] = cpu_to_le64(addr);
	return 0;
}

/**
 * tern_ib_map_mr_sg() - fill a fast-registration MR's page list from a DMA-mapped list
 * @ibmr: an MR of tern_ib_alloc_mr()
 * @sg: the scatterlist
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry, or NULL
 *
 * ib_sg_to_pages() cuts the list into ibmr->page_size pages (the device takes any page
 * size in page_size_cap from 4 KiB on) and sets iova and length; the next IB_WR_REG_MR
 * of the MR hands the list to the device.
 *
 * Return: the number of entries mapped (fewer than @sg_nents when the list is full or has
 * a gap inside a page), or a negative errno.
 */
int tern_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset)
{
	struct tern_ib_mr *mr = to_tmr(ibmr);

	if (!mr->fr_max)
		return -EINVAL;
	mr->fr_n = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, tern_ib_set_page);
}

/**
 * tern_ib_fill_res_mr_entry() - the driver's view of an MR for ``rdma res show mr -dd``
 * @msg: the netlink message the RDMA core is filling
 * @ibmr: the MR (held by restrack for the call)
 *
 * The MR's index in the device's table and its key byte (the lkey/rkey split), and how the
 * device translates it: "physical" (a DMA MR, bus addresses) or the page size and number
 * of pages of its page list, handed over directly or in chunks.
 *
 * Return: 0 or -EMSGSIZE when @msg is full.
 */
int tern_ib_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct tern_ib_mr *mr = to_tmr(ibmr);
	struct nlattr *table;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "mr_index", ibmr->lkey >> 8) ||
	    rdma_nl_put_driver_u32_hex(msg, "key", ibmr->lkey & 0xff))
		goto err;
	if (mr->fr_max) {
		if (rdma_nl_put_driver_string(msg, "translation", "fast_reg") ||
		    rdma_nl_put_driver_u32(msg, "max_pages", mr->fr_max))
			goto err;
	} else if (!mr->umem) {
		if (rdma_nl_put_driver_string(msg, "translation", "physical"))
			goto err;
	} else if (rdma_nl_put_driver_string(msg, "translation", "page_list") ||
		   rdma_nl_put_driver_u32(msg, "page_size", 1u << mr->page_shift) ||
		   rdma_nl_put_driver_u32(msg, "pages", mr->npages) ||
		   rdma_nl_put_driver_string(msg, "page_list",
					     mr->pbl_mode == TERN_MEM_PAGE_LIST ? "chunked" :
					     "direct")) {
		goto err;
	}
	nla_nest_end(msg, table);
	return 0;

err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/**
 * tern_ib_alloc_mw() - a memory window of type 1 or 2 (user space binds it)
 * @ibmw: the RDMA core's window (type and PD set)
 * @udata: no driver data
 *
 * The window starts unbound; ibv_bind_mw (type 1) or an IBV_WR_BIND_MW work request binds it
 * through a QP's send queue (struct tern_bind_mw_seg), the provider tracks its rkey.
 *
 * Return: 0, -EOPNOTSUPP without TERN_RDMA_CAP_MW, -ENOSPC when the device has no key left.
 */
int tern_ib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibmw->device);
	struct tern_cmd_create_mr_in in = {};

	if (!tern_ib_has_cap(dev, TERN_RDMA_CAP_MW))
		return -EOPNOTSUPP;
	in.pdn = cpu_to_le32(to_tpd(ibmw->pd)->pdn);
	in.flags = ibmw->type == IB_MW_TYPE_1 ? TERN_MR_F_MW_TYPE1 : TERN_MR_F_MW_TYPE2;
	return tern_ib_create_key(dev, &in, &ibmw->rkey);
}

/**
 * tern_ib_dealloc_mw() - destroy a memory window, bound or not
 * @ibmw: the window
 *
 * Return: 0 (a window holds no host memory; a device that refuses is reported).
 */
int tern_ib_dealloc_mw(struct ib_mw *ibmw)
{
	struct tern_ib_dev *dev = to_tibdev(ibmw->device);
	struct tern_cmd_destroy_mr_in in = { .key = cpu_to_le32(ibmw->rkey) };
	int err;

	err = tern_ib_cmd(dev, TERN_CMD_DESTROY_MR, &in, sizeof(in), NULL, 0, NULL);
	tern_ib_destroy_failed(dev, "MW", ibmw->rkey >> 8, err);
	return 0;
}

/**
 * tern_ib_dereg_mr() - destroy an MR
 * @ibmr: the MR
 * @udata: unused
 *
 * Return: 0, or -EBUSY while memory windows are bound to the MR (nothing changes then).
 * When the device is alive but refuses to destroy the MR for another reason, the pages
 * stay pinned until the device is removed.
 */
int tern_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibmr->device);
	struct tern_ib_mr *mr = to_tmr(ibmr);
	struct tern_cmd_destroy_mr_in in = { .key = cpu_to_le32(ibmr->lkey) };
	int err;

	err = tern_ib_cmd(dev, TERN_CMD_DESTROY_MR, &in, sizeof(in), NULL, 0, NULL);
	if (err == -EBUSY && tern_core_alive(dev->tdev))
		return -EBUSY;		/* windows are bound to it: unbind or free them first */
	if (tern_ib_destroy_failed(dev, "MR", ibmr->lkey, err)) {
		/* the device may still use the pages; a page list is leaked on purpose */
		tern_ib_zombie_add(dev, mr->umem);
	} else {
		ib_umem_release(mr->umem);
		tern_ib_dma_buf_free(dev, &mr->fr_list);
	}
	kfree(mr);
	return 0;
}

/*
 * REREG_MR: the device changes @mr in place (TERN_RDMA_CAP_REREG_MR), keeping its keys. The
 * range is pinned again (the rights decide how it is pinned); the old pages are released
 * once the device uses the new ones. On error @mr is as it was.
 */
static int tern_ib_rereg_in_place(struct tern_ib_dev *dev, struct tern_ib_mr *mr, u64 start,
				  u64 length, u64 iova, int access, struct ib_pd *ibpd)
{
	struct tern_cmd_rereg_mr_in in = {};
	struct tern_ib_pbl pbl;
	struct ib_umem *umem;
	u32 npages;
	int err;

	err = tern_ib_umr_prepare(dev, ibpd, start, length, iova, access, &umem, &pbl, &in.mr,
				  &npages);
	if (err)
		return err;
	in.key = cpu_to_le32(mr->ibmr.lkey);
	in.mr.key = (u8)mr->ibmr.lkey;
	err = tern_ib_cmd(dev, TERN_CMD_REREG_MR, &in, sizeof(in), NULL, 0, NULL);
	tern_ib_pbl_free(dev, &pbl);
	if (err) {
		/* no answer: the device may have taken the new pages, they stay pinned */
		if (err == -ETIMEDOUT && tern_core_alive(dev->tdev))
			tern_ib_zombie_add(dev, umem);
		else
			ib_umem_release(umem);
		return err;
	}
	ib_umem_release(mr->umem);
	mr->umem = umem;
	mr->page_shift = in.mr.page_shift;
	mr->npages = npages;
	mr->pbl_mode = in.mr.pbl.mode;
	mr->access = access;
	return 0;
}

/**
 * tern_ib_rereg_user_mr() - change a user MR's translation, PD or access rights
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD and/or IB_MR_REREG_ACCESS
 * @start: with IB_MR_REREG_TRANS: the new range's start in the caller's address space
 * @length: with IB_MR_REREG_TRANS: its bytes
 * @iova: with IB_MR_REREG_TRANS: the address it has in work requests
 * @access: with IB_MR_REREG_ACCESS: the new IB_ACCESS_* flags
 * @ibpd: the PD the MR is to be in (the old one without IB_MR_REREG_PD)
 * @udata: no driver data
 *
 * With TERN_RDMA_CAP_REREG_MR the device changes the MR in place (REREG_MR) and its keys
 * stay, as applications expect of a change of rights or PD (ConnectX keeps them too).
 * Without it this registers a new MR with what changes and what is kept (the old range is
 * pinned again when the translation stays), and the RDMA core destroys the old MR once it
 * has the new one: the new MR has new keys. Either way the MR is untouched when this fails.
 *
 * Return: NULL (changed in place), the new MR, or an ERR_PTR() (as tern_ib_reg_user_mr();
 * -EINVAL for an MR that is not a user MR, -EOPNOTSUPP for a dma-buf MR, -EBUSY while
 * memory windows are bound to it).
 */
struct ib_mr *tern_ib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				    u64 iova, int access, struct ib_pd *ibpd,
				    struct ib_udata *udata)
{
	struct tern_ib_dev *dev = to_tibdev(ibmr->device);
	struct tern_ib_mr *mr = to_tmr(ibmr);
	struct ib_mr *new;
	int err;

	if (!mr->umem || (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EINVAL);
	if (mr->umem->is_dmabuf)
		return ERR_PTR(-EOPNOTSUPP);	/* its pages are the dma-buf's: register anew */
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = ibmr->length;
		iova = ibmr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (tern_ib_has_cap(dev, TERN_RDMA_CAP_REREG_MR)) {
		err = tern_ib_rereg_in_place(dev, mr, start, length, iova, access, ibpd);
		return err ? ERR_PTR(err) : NULL;
	}
	new = tern_ib_reg_user_mr(ibpd, start, length, iova, access, udata);
	if (IS_ERR(new))
		return new;
	/* The RDMA core sets these for a registration, not for an MR that replaces another. */
	new->iova = iova;
	new->length = length;
	return new;
}

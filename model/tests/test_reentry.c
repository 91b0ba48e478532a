/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Re-entry: the model's own DMA and MSI-X messages aimed at its BARs, and hosts that call back
 * into the model from inside its callbacks (device.c, "entry and re-entry";
 * Documentation/hw/interface.rst, "The device's accesses to itself").
 */
#include <stdlib.h>

#include "test_rdma.h"

static uint64_t self_dma_dropped(struct fake *f)
{
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];

	if (!drv_eth_stats(f, st))
		return UINT64_MAX;
	return rd64(st + OFF(struct tern_cmd_eth_stats_out, self_dma_dropped));
}

/*
 * A connected pair whose side 0 gives up after one retry of a short timeout, with its BARs in
 * its own DMA space (fk_map_self).
 */
static bool self_conn(struct conn *c)
{
	struct connopt o;

	connopt_default(&o);
	o.timeout = 8;
	o.retry_cnt = 1;
	if (!conn_setup(c, &o))
		return false;
	fk_map_self(&c->d[0]->f);
	return true;
}

/*
 * What an audit proved on the model before the guard: the driver moves side 0's CQ onto the
 * device's doorbell page (RESIZE_CQ to BAR2 + 0, the command doorbell), writes a DESTROY_QP
 * into the command ring without ringing, and posts a SEND whose wr_id is the command ring's
 * producer index to a peer that never answers. The retry timer fails the SEND; its error CQE
 * lands on the command doorbell; QEMU's adapter runs the model from the doorbell, and the
 * DESTROY_QP freed the QP that req_complete was completing (use after free). Now the write
 * is dropped and counted, the command waits for the driver's own doorbell, and the QP is in
 * ERR until the driver destroys it.
 */
static void t_timer_cqe_on_cmd_doorbell(void)
{
	typedef struct tern_cmd_resize_cq_in R;
	uint8_t in[sizeof(R)] = { 0 }, dq[sizeof(struct tern_cmd_destroy_qp_in)] = { 0 };
	struct conn c;
	struct fake *f;
	struct cqe ce;
	static const char msg[] = "hello";

	RQ(self_conn(&c));
	f = &c.d[0]->f;
	wr64(in + OFF(R, mem) + OFF(struct tern_mem_desc, addr), FK_SELF_BASE + FK_SELF_DB);
	wr32(in + OFF(R, mem) + OFF(struct tern_mem_desc, npages), 1);
	in[OFF(R, mem) + OFF(struct tern_mem_desc, page_shift)] = 12;
	in[OFF(R, mem) + OFF(struct tern_mem_desc, mode)] = TERN_MEM_DIRECT;
	wr32(in + OFF(R, cqn), c.cq[0].cqn);
	in[OFF(R, log_depth)] = 4;
	RQ(rdev_cmd(c.d[0], TERN_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0, NULL) == TERN_CMD_OK);
	wr32(dq, c.qp[0].qpn);
	drv_cmd_post(f, TERN_CMD_DESTROY_QP, 0x77, dq, sizeof(dq), 0, 0, 0);
	c.w.filter = wire_drop_dir0;
	post_send_inline(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, f->sq_pi, msg,
			 sizeof(msg), 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	wire_advance(&c.w, 200000000);
	CHECK(f->self_writes > 0);
	/* the DESTROY_QP has not run: nothing completed on the command ring */
	CHECK(!drv_cmd_poll(f, &ce));
	/* the driver rings it: it runs now, on a QP that the timer had moved to ERR */
	drv_cmd_ring(f);
	fk_run(f);
	RQ(drv_cmd_poll(f, &ce));
	CHECK_EQ(ce.token, 0x77);
	CHECK_EQ(ce.status, TERN_CMD_OK);
	c.qp[0].qpn = 0;	/* destroyed */
	CHECK(self_dma_dropped(f) > 0);
	CHECK_EQ(rreg(f, TERN_REG_STATUS) & TERN_STATUS_FATAL, 0);
out:
	conn_free(&c);
}

/*
 * The same without any doorbell: the completion EQ's MSI-X message points at BAR0 CTRL with
 * the RESET bit. The timer's error CQE raises the event, and the message reset the device
 * (freeing every QP) while req_complete still used one. Now the message is dropped and
 * counted, and the device goes on.
 */
#define COMP_VEC	1	/* the rdev's completion EQ (rdma_drv.h) */

static void t_msix_message_resets_device(void)
{
	struct conn c;
	struct fake *f;
	struct wc w;
	static const char msg[] = "hello";

	RQ(self_conn(&c));
	f = &c.d[0]->f;
	f->msg_addr[COMP_VEC] = FK_SELF_BASE + TERN_REG_CTRL;
	f->msg_data[COMP_VEC] = TERN_CTRL_RESET;
	drv_eq_arm(f, &c.d[0]->comp_eq);
	cq_arm(c.d[0], &c.cq[0], TERN_UDB_CQ_ARM_NEXT);
	c.w.filter = wire_drop_dir0;
	post_send_inline(c.d[0], &c.qp[0], TERN_WQE_SEND, TERN_WQE_F_SIGNALED, 42, msg,
			 sizeof(msg), 0, 0, 0);
	ring_sq(c.d[0], &c.qp[0]);
	RQ(conn_poll(&c, 0, &w, 1, 200000000) == 1);
	CHECK_WC(&w, TERN_WQE_SEND, TERN_CQE_RETRY_EXC_ERR, 42);
	CHECK(f->msix[COMP_VEC] > 0);
	CHECK(f->self_writes > 0);
	/* no reset: READY, the QP still there (in ERR), the counter moved */
	CHECK_EQ(rreg(f, TERN_REG_CTRL), 0);
	CHECK(rreg(f, TERN_REG_STATUS) & TERN_STATUS_READY);
	CHECK_EQ(qp_state(c.d[0], c.qp[0].qpn), TERN_QPS_ERR);
	CHECK(self_dma_dropped(f) > 0);
out:
	conn_free(&c);
}

/* ---- every entry point, entered again from inside every other --------------------------- */

enum entry { E_MMIO, E_RUN, E_TIMER, E_RX, E_LINK, E_RESET, E_NUM };
static const char *const entry_name[E_NUM] = {
	"mmio_write", "run", "timer", "rx_frame", "set_link", "reset",
};

struct nest {
	enum entry inner;
	unsigned int fired;
	size_t rx_result;
	uint32_t magic;		/* E_MMIO: BAR0's MAGIC read by the device's DMA */
	bool link_want;
	uint8_t frame[60];
};

#define SCRATCH_MARK	0x5eed5eedu

/* The fake's re-entry hook: one nested call of the chosen kind, at the first callback. */
static void nest_once(struct fake *f)
{
	struct nest *n = f->reenter_ctx;

	if (n->fired++)
		return;
	switch (n->inner) {
	case E_MMIO: {	/* the device's DMA onto BAR0 and BAR2, as a guest can aim it */
		uint8_t v[4];

		wr32(v, 0xbad);
		f->host.dma_write(f, FK_SELF_BASE + TERN_REG_SCRATCH, v, sizeof(v));
		wr32(v, f->sq_pi + 1u);		/* a command doorbell past what was posted */
		f->host.dma_write(f, FK_SELF_BASE + FK_SELF_DB + TERN_DB_CMDQ, v, sizeof(v));
		f->host.dma_read(f, FK_SELF_BASE + TERN_REG_MAGIC, v, sizeof(v));
		n->magic = rd32(v);
		break;
	}
	case E_RUN:
		tern_model_run(f->m);
		break;
	case E_TIMER:
		tern_model_timer(f->m);
		break;
	case E_RX:
		n->rx_result = tern_model_rx_frame(f->m, n->frame, sizeof(n->frame));
		if (!n->rx_result) {
			/* kept, as QEMU keeps it: offered again from rx_ready */
			f->held_frame = n->frame;
			f->held_len = sizeof(n->frame);
		}
		break;
	case E_LINK:	/* the other way from what it is at that moment */
		n->link_want = !(tern_model_mmio_read(f->m, TERN_BAR_REGS, TERN_REG_STATUS, 4) &
				 TERN_STATUS_LINK_UP);
		tern_model_set_link(f->m, n->link_want);
		break;
	default:
		tern_model_reset(f->m);
		break;
	}
}

/*
 * A device with a command queue, an async EQ and an RX queue with buffers, its BARs in its
 * DMA space; scratch marked. Then @outer, with the hook armed, in a way that makes the model
 * call its host.
 */
static void nest_case(enum entry outer, enum entry inner)
{
	struct fake f;
	struct drv_ring aeq, eq, rx;
	struct nest n = { .inner = inner };
	uint8_t fr[60], qp[sizeof(struct tern_cmd_query_port_out)];
	unsigned int i;
	struct cqe ce;

	fk_init(&f, false);
	fk_map_self(&f);
	RQ(drv_cmdq_enable(&f, 4));
	RQ(drv_eq_create(&f, &aeq, 8, 0, TERN_EQ_F_ASYNC, false) == TERN_CMD_OK);
	RQ(drv_eq_create(&f, &eq, 8, 1, 0, false) == TERN_CMD_OK);
	RQ(drv_ethq_create(&f, &rx, true, 6, eq.num, false) == TERN_CMD_OK);
	for (i = 0; i < 4; i++) {
		uint8_t *d = drv_ring_entry(&f, &rx, rx.pi);

		memset(d, 0, 16);
		wr64(d + OFF(struct tern_eth_rxd, addr), fk_alloc(&f, 2048, 64));
		wr16(d + OFF(struct tern_eth_rxd, buf_len), 2048);
		rx.pi++;
	}
	db(&f, TERN_DB_ETH_RXQ(rx.num), rx.pi);
	fk_run(&f);
	wreg(&f, TERN_REG_SCRATCH, SCRATCH_MARK);
	memcpy(n.frame, test_mac, 6);
	memset(n.frame + 6, 0x42, sizeof(n.frame) - 6);
	memcpy(fr, n.frame, sizeof(fr));
	f.reenter_ctx = &n;

	switch (outer) {
	case E_MMIO:		/* a command doorbell: the model kicks its host from inside */
		drv_cmd_post(&f, TERN_CMD_QUERY_PORT, 1, NULL, 0, 0, sizeof(qp), f.out_mb);
		f.reenter = nest_once;
		drv_cmd_ring(&f);
		break;
	case E_RUN:		/* the command runs: DMA, a completion */
		drv_cmd_post(&f, TERN_CMD_QUERY_PORT, 1, NULL, 0, 0, sizeof(qp), f.out_mb);
		drv_cmd_ring(&f);
		f.reenter = nest_once;
		tern_model_run(f.m);
		break;
	case E_TIMER:		/* CTRL.RESET completes in the timer (a log line) */
		wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
		f.now += 2000000;
		f.reenter = nest_once;
		tern_model_timer(f.m);
		break;
	case E_RX:		/* a frame written into an RX buffer */
		f.reenter = nest_once;
		CHECK_EQ(tern_model_rx_frame(f.m, fr, sizeof(fr)), sizeof(fr));
		break;
	case E_LINK:		/* LINK_CHANGE on the async EQ, a log line */
		f.reenter = nest_once;
		tern_model_set_link(f.m, false);
		break;
	default:		/* the reset cancels the armed reset deadline: timer_arm */
		wreg(&f, TERN_REG_CTRL, TERN_CTRL_RESET);
		f.reenter = nest_once;
		tern_model_reset(f.m);
		break;
	}
	f.reenter = NULL;
	if (!n.fired) {
		t_failures++;
		printf("#   %s: the model made no host callback to re-enter from\n",
		       entry_name[outer]);
		goto out;
	}
	fk_run(&f);	/* what the nested call left to the host */
	while (drv_cmd_poll(&f, &ce))
		;	/* the NOP of the outer doorbell or run */

	switch (inner) {
	case E_MMIO:	/* writes dropped, counted; the read answered */
		CHECK(rreg(&f, TERN_REG_SCRATCH) != 0xbad);
		CHECK_EQ(n.magic, TERN_MAGIC);
		if (outer == E_TIMER || outer == E_RESET)
			RQ(drv_cmdq_enable(&f, 4));
		CHECK_EQ(self_dma_dropped(&f), 2);
		break;
	case E_RX:	/* refused inside, taken once the host offered it again */
		CHECK_EQ(n.rx_result, 0);
		CHECK(f.held_frame == NULL);
		CHECK_EQ(f.held_result, sizeof(n.frame));
		break;
	case E_LINK:	/* done after the outer call */
		CHECK_EQ(!!(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_LINK_UP), n.link_want);
		break;
	case E_RESET:	/* done after the outer call: scratch forgotten, READY */
		CHECK_EQ(rreg(&f, TERN_REG_SCRATCH), 0);
		CHECK(rreg(&f, TERN_REG_STATUS) & TERN_STATUS_READY);
		break;
	default:
		break;
	}
	/* the device still works: a command round trip (after a reset, on a new queue) */
	if (!(rreg(&f, TERN_REG_CMDQ_STATUS) & TERN_CMDQ_STATUS_ENABLED)) {
		f.now += 2000000;
		tern_model_timer(f.m);
		RQ(drv_cmdq_enable(&f, 4));
	}
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, qp, sizeof(qp), &ce), TERN_CMD_OK);
out:
	if (t_failures)
		printf("#   (outer %s, inner %s)\n", entry_name[outer], entry_name[inner]);
	fk_fini(&f);
}

static void t_nested_entry_matrix(void)
{
	unsigned int o, i;
	int before;

	for (o = 0; o < E_NUM; o++) {
		for (i = 0; i < E_NUM; i++) {
			before = t_failures;
			nest_case((enum entry)o, (enum entry)i);
			if (t_failures != before)
				return;		/* one failing pair is enough to read */
		}
	}
}

const struct test reentry_tests[] = {
	{ "reentry: the retry timer's CQE on the command doorbell does not run DESTROY_QP inside it",
	  t_timer_cqe_on_cmd_doorbell },
	{ "reentry: an MSI-X message at CTRL.RESET from a completion event is dropped, counted",
	  t_msix_message_resets_device },
	{ "reentry: every entry point nested in every other: refused, deferred, nothing lost",
	  t_nested_entry_matrix },
	{ NULL, NULL },
};

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: creation, resets, registers (BAR0), doorbell decoding (BAR2), link,
 * the single host timer, logging and the fatal state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mac.h"

/* ---- helpers used by the other files ------------------------------------------------------ */

/*
 * Most warnings are a guest's doing (a doorbell out of range, a command refused) and a guest
 * can repeat them at will: at most TERNM_LOG_BURST lines below LOG_ERR go out per
 * TERNM_LOG_WINDOW_NS of device time, and the first line of a later window says how many
 * were left out. Errors, which a device raises once (fatal, reset), always go out.
 */
#define TERNM_LOG_BURST		64
#define TERNM_LOG_WINDOW_NS	1000000000ull

void ternm_log(struct tern_model *m, enum tern_model_log_level level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!m->host.log)
		return;
	if (level > TERN_MODEL_LOG_ERR) {
		uint64_t now = ternm_now(m);

		if (now - m->log_window_ns >= TERNM_LOG_WINDOW_NS) {
			m->log_window_ns = now;
			m->log_lines = 0;
			if (m->log_dropped) {
				snprintf(msg, sizeof(msg), "%lu log lines left out (at most %u a second)",
					 m->log_dropped, TERNM_LOG_BURST);
				m->log_dropped = 0;
				m->host.log(m->host.opaque, TERN_MODEL_LOG_WARN, msg);
			}
		}
		if (m->log_lines >= TERNM_LOG_BURST) {
			m->log_dropped++;
			return;
		}
		m->log_lines++;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m->host.log(m->host.opaque, level, msg);
}

uint64_t ternm_now(struct tern_model *m)
{
	return m->host.now_ns ? m->host.now_ns(m->host.opaque) : 0;
}

void ternm_kick(struct tern_model *m)
{
	if (m->host.kick)
		m->host.kick(m->host.opaque);
}

int ternm_dma_read(struct tern_model *m, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (!m->host.dma_read || addr + len < addr)
		return -1;
	return m->host.dma_read(m->host.opaque, addr, buf, len) ? -1 : 0;
}

int ternm_dma_write(struct tern_model *m, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (!m->host.dma_write || addr + len < addr)
		return -1;
	return m->host.dma_write(m->host.opaque, addr, buf, len) ? -1 : 0;
}

/* Recompute the earliest deadline and (re)arm or cancel the host timer if it changed. */
void ternm_timer_update(struct tern_model *m)
{
	uint64_t next = UINT64_MAX;
	uint64_t cmd = ternm_cmdq_next_deadline(m);
	uint64_t rdma = ternm_rdma_next_deadline(m);
	uint64_t mac = ternm_mac_next_deadline(m);
	uint64_t eth = ternm_eth_next_deadline(m);

	if (m->resetting)
		next = m->reset_deadline_ns;
	if (cmd < next)
		next = cmd;
	if (rdma < next)
		next = rdma;
	if (mac < next)
		next = mac;
	if (eth < next)
		next = eth;
	if (next == m->timer_armed_ns)
		return;
	m->timer_armed_ns = next;
	if (m->host.timer_arm)
		m->host.timer_arm(m->host.opaque, next);
}

/* The MAC needs its timer earlier than armed (a sender refused, a pause or XOFF started). */
static void mac_timer_check(struct tern_model *m)
{
	if (ternm_mac_next_deadline(m) < m->timer_armed_ns)
		ternm_timer_update(m);
}

/*
 * A device error: raise STATUS.FATAL with @syndrome, report it on the ASYNC EQ if there is
 * one, and stop all processing (commands, transmit, receive) until a reset.
 */
void ternm_fatal(struct tern_model *m, enum tern_fatal_syndrome syndrome)
{
	if (m->fatal)
		return;
	m->fatal = true;
	m->fatal_syndrome = (uint16_t)syndrome;
	if (syndrome == TERN_FATAL_CMDQ_DMA)
		m->cmdq_error = true;
	ternm_log(m, TERN_MODEL_LOG_ERR, "fatal device error, syndrome %u", (unsigned int)syndrome);
	ternm_eq_post_flag(m, TERN_EQ_F_ASYNC, TERN_EQE_FATAL, (uint32_t)syndrome);
	ternm_timer_update(m);
	/* Frames held back (by the embedding, or in the lossless buffer) are dropped now. */
	if (m->rx_blocked || ternm_mac_rx_pending(m))
		ternm_kick(m);
}

/* ---- state -------------------------------------------------------------------------------- */

/* Forget everything a reset forgets: queues, EQs, counters, registers, port settings. */
static void clear_state(struct tern_model *m)
{
	ternm_wire_clear(m);	/* first: a frame held back goes out before the reset */
	ternm_mac_clear(m);	/* XON to a peer we pause, then DCB back to its reset state */
	m->ip_id = 0;
	ternm_cmdq_clear(m);
	ternm_eq_clear(m);
	ternm_eth_clear(m);
	ternm_rdma_clear(m);
	memset(&m->stats, 0, sizeof(m->stats));
	m->scratch = 0;
	m->cmdq_sq_lo = m->cmdq_sq_hi = m->cmdq_cq_lo = m->cmdq_cq_hi = 0;
	m->cmdq_cfg = 0;
	m->cmdq_error = false;
	m->fatal = false;
	m->fatal_syndrome = TERN_FATAL_NONE;
	m->resetting = false;
	m->reset_deadline_ns = 0;
	m->port_flags = 0;
	m->mtu = TERNM_DEFAULT_MTU;
	memcpy(m->mac, m->cfg.mac, sizeof(m->mac));
}

struct tern_model *tern_model_create(const struct tern_model_host *host,
				     const struct tern_model_config *cfg)
{
	struct tern_model *m;

	if (!host || !cfg)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->host = *host;
	m->cfg = *cfg;
	m->cfg.serial[sizeof(m->cfg.serial) - 1] = '\0';
	if (m->cfg.num_msix > TERN_MAX_MSIX)
		m->cfg.num_msix = TERN_MAX_MSIX;
	m->timer_armed_ns = UINT64_MAX;
	m->link_up = true;
	/* power-on: the device clock starts at 0 */
	m->clk_base_ns = ternm_now(m);
	if (ternm_mac_init(m)) {
		free(m);
		return NULL;
	}
	if (ternm_rdma_init(m)) {
		ternm_mac_fini(m);
		free(m);
		return NULL;
	}
	clear_state(m);
	m->ready = true;
	return m;
}

uint64_t tern_model_host_mem(const struct tern_model *m)
{
	return m->host_mem_bytes;
}

bool ternm_host_mem_try(struct tern_model *m, uint64_t bytes)
{
	uint64_t max = m->cfg.host_mem_max ? m->cfg.host_mem_max : TERN_MODEL_HOST_MEM_MAX;

	if (bytes > max - m->host_mem_bytes)
		return false;
	m->host_mem_bytes += bytes;
	return true;
}

bool ternm_host_mem_charge(struct tern_model *m, uint64_t bytes)
{
	uint64_t max = m->cfg.host_mem_max ? m->cfg.host_mem_max : TERN_MODEL_HOST_MEM_MAX;

	if (!ternm_host_mem_try(m, bytes)) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
			  "host memory: %llu more bytes would pass the bound (%llu of %llu held)",
			  (unsigned long long)bytes, (unsigned long long)m->host_mem_bytes,
			  (unsigned long long)max);
		return false;
	}
	return true;
}

void ternm_host_mem_release(struct tern_model *m, uint64_t bytes)
{
	m->host_mem_bytes -= bytes;
}

void tern_model_destroy(struct tern_model *m)
{
	if (!m)
		return;
	ternm_cmdq_clear(m);
	ternm_eq_clear(m);
	ternm_eth_clear(m);
	ternm_rdma_fini(m);
	ternm_mac_fini(m);
	free(m);
}

static void do_reset(struct tern_model *m)
{
	clear_state(m);
	m->ready = true;
	ternm_timer_update(m);
	/* A frame the embedding holds back would otherwise wait for an rx_ready forever. */
	if (m->rx_blocked)
		ternm_kick(m);
}

/* CTRL.RESET: forget everything now, become READY again TERNM_RESET_NS later. */
static void start_reset(struct tern_model *m)
{
	clear_state(m);
	m->ready = false;
	m->resetting = true;
	m->reset_deadline_ns = ternm_now(m) + TERNM_RESET_NS;
	ternm_log(m, TERN_MODEL_LOG_INFO, "device reset requested");
	ternm_timer_update(m);
	if (m->rx_blocked)
		ternm_kick(m);
}

/* ---- device clock -------------------------------------------------------------------------- */

#define TERNM_NS_PER_S	1000000000ull

/*
 * The device clock at host time @now: clk_base plus the time since, scaled by
 * 1 + clk_ppb / 10^9. With |clk_ppb| <= TERN_CLOCK_MAX_ADJ_PPB (10^8) neither product passes
 * 2^63 for any 64-bit interval, and the result never goes back as @now goes forward (the
 * rate is at least 0.9 and the rounding error below one nanosecond).
 */
static uint64_t clock_at(const struct tern_model *m, uint64_t now)
{
	uint64_t d = now - m->clk_base_ns;
	int64_t ppb = m->clk_ppb;
	int64_t adj;

	adj = (int64_t)(d / TERNM_NS_PER_S) * ppb +
	      (int64_t)(d % TERNM_NS_PER_S) * ppb / (int64_t)TERNM_NS_PER_S;
	return m->clk_base + d + (uint64_t)adj;
}

uint64_t ternm_clock_now(struct tern_model *m)
{
	return clock_at(m, ternm_now(m));
}

/* The clock takes a new value (and rate) from now on. */
static void clock_rebase(struct tern_model *m, uint64_t now, uint64_t val, int32_t ppb)
{
	m->clk_base_ns = now;
	m->clk_base = val;
	m->clk_ppb = ppb;
}

static void clock_write(struct tern_model *m, uint64_t off, uint32_t val)
{
	uint64_t now = ternm_now(m);
	int32_t ppb = (int32_t)val;

	switch (off) {
	case TERN_REG_CLOCK_FREQ:
		if (ppb < -TERN_CLOCK_MAX_ADJ_PPB || ppb > TERN_CLOCK_MAX_ADJ_PPB) {
			ternm_log(m, TERN_MODEL_LOG_WARN,
				  "clock rate adjustment %d ppb out of range: ignored", ppb);
			return;
		}
		clock_rebase(m, now, clock_at(m, now), ppb);
		break;
	case TERN_REG_CLOCK_ARG_LO:
		m->clk_arg = (m->clk_arg & ~0xffffffffull) | val;
		break;
	case TERN_REG_CLOCK_ARG_HI:
		m->clk_arg = (m->clk_arg & 0xffffffffull) | ((uint64_t)val << 32);
		break;
	case TERN_REG_CLOCK_CMD:
		if (val == TERN_CLOCK_CMD_SET)
			clock_rebase(m, now, m->clk_arg, m->clk_ppb);
		else if (val == TERN_CLOCK_CMD_ADJUST)
			clock_rebase(m, now, clock_at(m, now) + m->clk_arg, m->clk_ppb);
		else
			ternm_log(m, TERN_MODEL_LOG_WARN, "clock command %u unknown: ignored", val);
		break;
	default:
		break;
	}
}

/* ---- BAR0 registers ------------------------------------------------------------------------ */

static uint32_t reg_read(struct tern_model *m, uint64_t off)
{
	switch (off) {
	case TERN_REG_MAGIC:
		return TERN_MAGIC;
	case TERN_REG_VERSION:
		return TERN_IF_VERSION;
	case TERN_REG_FW_VERSION:
		return TERNM_FW_VERSION;
	case TERN_REG_CTRL:
		return m->resetting ? TERN_CTRL_RESET : 0;
	case TERN_REG_STATUS:
		return (m->ready ? TERN_STATUS_READY : 0) |
		       (m->fatal ? TERN_STATUS_FATAL : 0) |
		       (m->link_up ? TERN_STATUS_LINK_UP : 0) |
		       ((uint32_t)m->fatal_syndrome << TERN_STATUS_SYNDROME_SHIFT);
	case TERN_REG_SCRATCH:
		return m->scratch;
	case TERN_REG_CMD_TIMEOUT:
		return m->cfg.cmd_timeout_ms ? m->cfg.cmd_timeout_ms : TERN_CMD_TIMEOUT_DEFAULT_MS;
	case TERN_REG_RESET_TIMEOUT:
		/* resets take TERNM_RESET_NS (1 ms); the default leaves a host room to be late */
		return TERN_RESET_TIMEOUT_DEFAULT_MS;
	case TERN_REG_CMDQ_SQ_LO:
		return m->cmdq_sq_lo;
	case TERN_REG_CMDQ_SQ_HI:
		return m->cmdq_sq_hi;
	case TERN_REG_CMDQ_CQ_LO:
		return m->cmdq_cq_lo;
	case TERN_REG_CMDQ_CQ_HI:
		return m->cmdq_cq_hi;
	case TERN_REG_CMDQ_CFG:
		return m->cmdq_cfg;
	case TERN_REG_CMDQ_STATUS:
		return (m->cmdq.enabled ? TERN_CMDQ_STATUS_ENABLED : 0) |
		       (m->cmdq_error ? TERN_CMDQ_STATUS_ERROR : 0);
	case TERN_REG_CLOCK_FREQ:
		return (uint32_t)m->clk_ppb;
	case TERN_REG_CLOCK_ARG_LO:
		return (uint32_t)m->clk_arg;
	case TERN_REG_CLOCK_ARG_HI:
		return (uint32_t)(m->clk_arg >> 32);
	case TERN_REG_CLOCK_LO:
		return (uint32_t)ternm_clock_now(m);
	case TERN_REG_CLOCK_HI:
		return (uint32_t)(ternm_clock_now(m) >> 32);
	default:
		return 0;
	}
}

static void reg_write(struct tern_model *m, uint64_t off, uint32_t val)
{
	if (off == TERN_REG_SCRATCH) {
		m->scratch = val;
		return;
	}
	if (off == TERN_REG_CTRL) {
		if (val & TERN_CTRL_RESET)
			start_reset(m);
		return;
	}
	if ((off < TERN_REG_CMDQ_SQ_LO || off > TERN_REG_CMDQ_CFG) &&
	    (off < TERN_REG_CLOCK_FREQ || off > TERN_REG_CLOCK_CMD))
		return;		/* read-only or unknown: ignored */
	if (!m->ready) {
		ternm_log(m, TERN_MODEL_LOG_WARN, "register 0x%04x written while not READY: ignored",
		       (unsigned int)off);
		return;
	}
	switch (off) {
	case TERN_REG_CMDQ_SQ_LO:
		m->cmdq_sq_lo = val;
		break;
	case TERN_REG_CMDQ_SQ_HI:
		m->cmdq_sq_hi = val;
		break;
	case TERN_REG_CMDQ_CQ_LO:
		m->cmdq_cq_lo = val;
		break;
	case TERN_REG_CMDQ_CQ_HI:
		m->cmdq_cq_hi = val;
		break;
	case TERN_REG_CMDQ_CFG:
		ternm_cmdq_cfg_write(m, val);
		break;
	default:
		clock_write(m, off, val);
		break;
	}
}

/* ---- BAR2 doorbells ------------------------------------------------------------------------ */

static void doorbell_write(struct tern_model *m, uint64_t off, uint32_t val)
{
	if (!m->ready || m->fatal)
		return;
	if (off == TERN_DB_CMDQ) {
		ternm_cmdq_doorbell(m, val);
	} else if (off >= TERN_DB_EQ(0) && off < TERN_DB_ETH_TXQ(0)) {
		unsigned int eqn = (unsigned int)(off - TERN_DB_EQ(0)) / 4;

		ternm_eq_doorbell(m, eqn, val);
	} else if (off >= TERN_DB_ETH_TXQ(0) && off < TERN_DB_ETH_TXQ(TERN_DB_ETH_MAX_QUEUES)) {
		ternm_eth_doorbell(m, false, (unsigned int)(off - TERN_DB_ETH_TXQ(0)) / 4, val);
	} else if (off >= TERN_DB_ETH_RXQ(0) && off < TERN_DB_ETH_RXQ(TERN_DB_ETH_MAX_QUEUES)) {
		ternm_eth_doorbell(m, true, (unsigned int)(off - TERN_DB_ETH_RXQ(0)) / 4, val);
	} else if (off >= TERN_DB_ETH_TXQ_ARM(0) &&
		   off < TERN_DB_ETH_TXQ_ARM(TERN_DB_ETH_MAX_QUEUES)) {
		ternm_eth_arm(m, false, (unsigned int)(off - TERN_DB_ETH_TXQ_ARM(0)) / 4, val);
	} else if (off >= TERN_DB_ETH_RXQ_ARM(0) &&
		   off < TERN_DB_ETH_RXQ_ARM(TERN_DB_ETH_MAX_QUEUES)) {
		ternm_eth_arm(m, true, (unsigned int)(off - TERN_DB_ETH_RXQ_ARM(0)) / 4, val);
	}
}

/* ---- entry and re-entry ------------------------------------------------------------------- */

/*
 * One public entry point runs at a time. The model calls its host in the middle of its work
 * (DMA, MSI-X messages, kicks, frames sent, log lines), and the host may come straight back:
 * a guest can aim the device's DMA or an MSI-X message at the device's own BARs (or at the
 * PCI configuration space, where a function-level reset is), and an embedding may hand over
 * a frame, a link change or a reset from inside a callback. Mid-operation the model's state
 * is not consistent (a QP being completed, a queue half-advanced), so a nested entry does
 * not run there:
 *   - a BAR write is dropped and counted in self_dma_dropped (QUERY_ETH_STATS), as a bus
 *     would fail a device's access to itself; a BAR read is served (no side effects);
 *   - a reset, a link change, the timer and a run are noted (TERNM_DEFER_*) and done in
 *     that order once the outer entry point has finished its own work: none is lost;
 *   - a frame is refused (0: the embedding keeps it), and the host is kicked so that the
 *     run that follows asks for it again through rx_ready.
 * The deferred work may itself be re-entered: at most TERNM_DEFER_ROUNDS rounds run before
 * the outer call returns, and what is left waits for the next entry.
 */
enum {
	TERNM_DEFER_RESET	= 1u << 0,
	TERNM_DEFER_LINK	= 1u << 1,
	TERNM_DEFER_TIMER	= 1u << 2,
	TERNM_DEFER_RUN		= 1u << 3,
};
#define TERNM_DEFER_ROUNDS	4

static void do_set_link(struct tern_model *m, bool up);
static void do_timer(struct tern_model *m);
static void do_run(struct tern_model *m);

static void run_deferred(struct tern_model *m)
{
	unsigned int rounds;

	for (rounds = 0; m->deferred && rounds < TERNM_DEFER_ROUNDS; rounds++) {
		unsigned int d = m->deferred;

		m->deferred = 0;
		if (d & TERNM_DEFER_RESET)
			do_reset(m);
		if (d & TERNM_DEFER_LINK)
			do_set_link(m, m->deferred_link_up);
		if (d & TERNM_DEFER_TIMER)
			do_timer(m);
		if (d & TERNM_DEFER_RUN)
			do_run(m);
	}
}

/* Enter the model; false (with @defer noted) when an entry point is already running. */
static bool model_enter(struct tern_model *m, unsigned int defer)
{
	if (m->in_model) {
		m->deferred |= defer;
		return false;
	}
	m->in_model = true;
	run_deferred(m);	/* left over from a host that kept coming back */
	return true;
}

static void model_leave(struct tern_model *m)
{
	run_deferred(m);
	m->in_model = false;
	if (m->deferred)
		ternm_kick(m);	/* the next run picks the rest up */
}

/* ---- MMIO entry points --------------------------------------------------------------------- */

uint64_t tern_model_mmio_read(struct tern_model *m, int bar, uint64_t offset, unsigned int size)
{
	uint64_t val = 0;
	unsigned int i;

	if (bar != TERN_BAR_REGS)
		return 0;	/* doorbells read as 0 */
	if ((size != 1 && size != 2 && size != 4 && size != 8) ||
	    offset >= TERN_BAR_REGS_SIZE || size > TERN_BAR_REGS_SIZE - offset)
		return 0;
	if (offset >= TERN_CLOCK_PAGE && offset < TERN_CLOCK_PAGE + TERN_CLOCK_PAGE_SIZE) {
		/* One sample of the clock for the whole access: a 64-bit read is atomic. */
		uint64_t clk = ternm_clock_now(m);

		for (i = 0; i < size; i++) {
			uint64_t a = offset + i;

			if (a < TERN_REG_CLOCK_LO || a > TERN_REG_CLOCK_HI + 3)
				continue;
			val |= ((clk >> (8 * (a - TERN_REG_CLOCK_LO))) & 0xff) << (8 * i);
		}
		return val;
	}
	/* Registers have no read side effects: assemble any access from the 32-bit words. */
	for (i = 0; i < size; i++) {
		uint64_t a = offset + i;
		uint32_t w = reg_read(m, a & ~3ull);

		val |= (uint64_t)((w >> (8 * (a & 3))) & 0xff) << (8 * i);
	}
	return val;
}

void tern_model_mmio_write(struct tern_model *m, int bar, uint64_t offset, uint64_t value,
			   unsigned int size)
{
	uint64_t bar_size;
	unsigned int i, words;

	if (bar == TERN_BAR_REGS)
		bar_size = TERN_BAR_REGS_SIZE;
	else if (bar == TERN_BAR_DB)
		bar_size = TERN_BAR_DB_SIZE;
	else
		return;
	if ((size != 4 && size != 8) || (offset & 3) || offset >= bar_size ||
	    size > bar_size - offset) {
		ternm_log(m, TERN_MODEL_LOG_WARN,
		       "BAR%d write of %u bytes at 0x%llx ignored (32-bit registers)", bar, size,
		       (unsigned long long)offset);
		return;
	}
	if (!model_enter(m, 0)) {
		if (!m->stats.self_dma_dropped++)
			ternm_log(m, TERN_MODEL_LOG_WARN,
				  "BAR%d write at 0x%llx from inside the device (its own DMA or MSI-X message): dropped",
				  bar, (unsigned long long)offset);
		return;
	}
	if (bar == TERN_BAR_DB && offset >= TERN_DB_PAGE_SIZE) {
		/* UAR pages: RDMA doorbells, single 64-bit writes (others are ignored there). */
		ternm_rdma_doorbell(m, offset, value, size);
	} else {
		/* A 64-bit write is two 32-bit writes, low address first. */
		words = size / 4;
		for (i = 0; i < words; i++) {
			uint32_t w = (uint32_t)(value >> (32 * i));

			if (bar == TERN_BAR_REGS)
				reg_write(m, offset + 4 * i, w);
			else
				doorbell_write(m, offset + 4 * i, w);
		}
	}
	model_leave(m);
}

/* ---- work, time, wire ---------------------------------------------------------------------- */

static void do_run(struct tern_model *m)
{
	/* RX descriptors may have appeared: the lossless buffer drains first, in order. */
	ternm_mac_rx_drain(m);
	if (m->ready && !m->fatal) {
		ternm_cmdq_run(m);
		if (!m->fatal)
			ternm_eth_run(m);
		if (!m->fatal)
			ternm_rdma_run(m);
	}
	/* The transmitter goes idle: a frame held back for reordering goes out now. */
	ternm_wire_idle(m);
	/* Senders refused by the MAC wait for its timer. */
	mac_timer_check(m);
}

void tern_model_run(struct tern_model *m)
{
	if (!model_enter(m, TERNM_DEFER_RUN))
		return;
	do_run(m);
	model_leave(m);
	/*
	 * Last, outside the model: the embedding may feed held-back frames to
	 * tern_model_rx_frame() from inside rx_ready.
	 */
	if (m->rx_blocked && !m->in_model && !ternm_eth_rx_would_block(m, NULL, 0)) {
		m->rx_blocked = false;
		if (m->host.rx_ready)
			m->host.rx_ready(m->host.opaque);
	}
}

static void do_timer(struct tern_model *m)
{
	uint64_t now = ternm_now(m);

	/* The host timer is one-shot: it is no longer armed. */
	m->timer_armed_ns = UINT64_MAX;
	if (m->resetting && now >= m->reset_deadline_ns) {
		m->resetting = false;
		m->ready = true;
		ternm_log(m, TERN_MODEL_LOG_INFO, "device reset done");
	}
	if (m->ready && !m->fatal) {
		ternm_cmdq_timer(m, now);
		ternm_rdma_timer(m, now);
		ternm_eth_timer(m, now);
	}
	/* Pause expiry, XOFF refresh, storm guard, and kicks for refused senders. */
	ternm_mac_timer(m, now);
	ternm_wire_idle(m);
	ternm_timer_update(m);
}

void tern_model_timer(struct tern_model *m)
{
	if (!model_enter(m, TERNM_DEFER_TIMER))
		return;
	do_timer(m);
	model_leave(m);
}

size_t tern_model_rx_frame(struct tern_model *m, const void *frame, size_t len)
{
	size_t r;

	if (!frame)
		len = 0;
	/*
	 * The one place frames from the wire enter the model: nothing longer than the
	 * longest frame the MAC takes (the largest MTU, its header and a VLAN tag) goes
	 * further, whatever the peer or the embedding hands over.
	 */
	if (len > TERN_ETH_MAX_FRAME) {
		m->stats.rx_oversize++;
		return len;
	}
	if (!model_enter(m, TERNM_DEFER_RUN)) {
		/* not now: the embedding keeps it, and the run the kick brings asks for it */
		m->rx_blocked = true;
		ternm_kick(m);
		return 0;
	}
	r = ternm_mac_rx_frame(m, frame, len);
	mac_timer_check(m);	/* pauses received, XOFF sent */
	model_leave(m);
	return r;
}

void tern_model_set_link(struct tern_model *m, bool up)
{
	if (!model_enter(m, TERNM_DEFER_LINK)) {
		m->deferred_link_up = up;
		return;
	}
	do_set_link(m, up);
	model_leave(m);
}

void tern_model_reset(struct tern_model *m)
{
	if (!model_enter(m, TERNM_DEFER_RESET))
		return;
	do_reset(m);
	model_leave(m);
}

static void do_set_link(struct tern_model *m, bool up)
{
	if (m->link_up == up)
		return;
	if (!up)
		ternm_wire_idle(m);	/* the frame held back makes it out before the carrier goes */
	m->link_up = up;
	ternm_log(m, TERN_MODEL_LOG_INFO, "link %s", up ? "up" : "down");
	if (m->ready && !m->fatal)
		ternm_eq_post_flag(m, TERN_EQ_F_ASYNC, TERN_EQE_LINK_CHANGE, up ? 1 : 0);
	if (m->rx_blocked || ternm_mac_rx_pending(m))
		ternm_kick(m);
}

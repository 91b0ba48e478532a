/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: internal state shared by the files of the model library.
 *
 * Everything hangs off struct tern_model; there is no global state. Every value that comes
 * from the guest (registers, doorbells, ring entries, command payloads) is untrusted and is
 * validated before use. Hardware fields are little-endian and are only ever read and written
 * through the get_le*() / put_le*() helpers below, at offsetof() positions of the structures
 * in include/linux/tern/, so the model works on a host of either endianness.
 */
#ifndef TERN_MODEL_INT_H
#define TERN_MODEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>
#include <linux/tern/tern_dcb.h>

#include "tern_model.h"

/* ---- device identity and limits (reported by QUERY_DEVICE) ---------------------------- */
#define TERNM_FW_MAJOR		1
#define TERNM_FW_MINOR		0
#define TERNM_FW_PATCH		0
#define TERNM_FW_VERSION		((TERNM_FW_MAJOR << 24) | (TERNM_FW_MINOR << 16) | TERNM_FW_PATCH)
#define TERNM_BOARD_ID		"TERN-EMU-1"
#define TERNM_LINK_SPEED_MBPS	25000u
#define TERNM_MAX_EQS		16
#define TERNM_MAX_ETH_TXQS		16
#define TERNM_MAX_ETH_RXQS		16
#define TERNM_MAX_EQ_LOG		12
#define TERNM_MAX_ETH_LOG		12
#define TERNM_DEFAULT_MTU		1500
#define TERNM_ETH_HDR_OVERHEAD	18	/* Ethernet header + one VLAN tag */

/* Model time constants. */
#define TERNM_RESET_NS		1000000ull	/* CTRL.RESET completes 1 ms later */
/* Work done per tern_model_run() before yielding with another kick. */
#define TERNM_CMD_BUDGET		64
#define TERNM_ETH_BUDGET		256
#define TERNM_MAX_ETH_MODER_PERIOD	4095	/* us; QUERY_DEVICE max_eth_moder_period */
#define TERNM_MAX_ETH_MODER_FRAMES	4095	/* QUERY_DEVICE max_eth_moder_frames */

#define TERNM_NS_PER_US		1000ull

/* ---- little-endian field access --------------------------------------------------------- */
static inline uint16_t get_le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t get_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[3] << 24);
}

static inline uint64_t get_le64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)get_le32(b) | ((uint64_t)get_le32(b + 4) << 32);
}

static inline void put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	put_le32(b, (uint32_t)v);
	put_le32(b + 4, (uint32_t)(v >> 32));
}

/* Big-endian fields of network headers. */
static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | get_be24(p + 1);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	put_be24(p + 1, v);
}

static inline uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

/* Field accessors for a byte image of a hardware structure. */
#define FLD(buf, type, field)	((uint8_t *)(buf) + offsetof(type, field))
#define CFLD(buf, type, field)	((const uint8_t *)(buf) + offsetof(type, field))

/* ---- host memory described by a struct tern_mem_desc --------------------------------- */
/*
 * The largest ring any object may have: the deepest CQ, 2^22 CQEs of 32 bytes (128 MiB) and
 * its CI record (the other rings are at most 16 MiB: an SQ of 2^14 slots of 1 KiB).
 */
#define TERNM_MEM_MAX_SIZE	((128ull << 20) + 4096)

struct ternm_mem {
	uint64_t size;		/* bytes the object uses; accesses beyond fault */
	uint8_t mode;		/* enum tern_mem_mode */
	uint8_t page_shift;
	uint32_t npages;
	uint64_t base;		/* TERN_MEM_DIRECT */
	uint64_t *pages;	/* TERN_MEM_PAGE_LIST: npages entries, owned (ternm_mem_free) */
};

/* ---- command processor -------------------------------------------------------------------- */
/* A command that has been taken off the ring but not yet completed (delayed NOP). */
struct ternm_pending_cmd {
	struct ternm_pending_cmd *next;
	uint64_t deadline_ns;
	uint64_t seq;		/* tie-break: submission order */
	uint16_t token;
	uint8_t status;
	uint32_t syndrome;
	uint32_t result;
	uint64_t out_addr;
	uint16_t out_len;	/* bytes of @data to write at out_addr */
	uint8_t data[];
};

struct ternm_cmdq {
	bool enabled;
	uint8_t log_depth;
	uint64_t sq_addr, cq_addr;	/* latched when enabled */
	uint16_t sq_pi;			/* last accepted doorbell value */
	uint16_t sq_ci;			/* entries consumed */
	uint16_t cq_pi;			/* completions written */
	unsigned int npending;		/* delayed commands in flight */
	struct ternm_pending_cmd *pending;	/* sorted by (deadline, seq) */
	uint64_t seq;
};

/* ---- event queues -------------------------------------------------------------------------- */
struct ternm_eq {
	bool used;
	bool armed;
	uint8_t log_depth;
	uint8_t vector;
	uint16_t flags;		/* TERN_EQ_F_* */
	uint32_t pi;		/* entries written, modulo 2^24 */
	uint32_t ci;		/* driver's consumer index, modulo 2^24 */
	struct ternm_mem mem;
};

#define TERNM_EQ_IDX_MASK		TERN_EQ_DB_CI_MASK

/* ---- Ethernet ------------------------------------------------------------------------------ */
/* A TX frame as its descriptors describe it (eth.c). */
struct ternm_tx_frame {
	unsigned int ndesc;	/* descriptors, the context included; 0: none */
	uint32_t len;		/* bytes gathered into m->tx_gather */
	uint16_t ctx_flags;	/* TERN_ETH_CTX_* (0 without a context) */
	uint16_t csum_start, csum_offset, mss;
	uint16_t status;	/* DONE, | ERR when it is not to be sent */
	bool ts_req;		/* TERN_ETH_TXD_TS on its last descriptor */
	bool ts_valid;		/* @ts taken: the MAC took the frame (its first segment) */
	uint64_t ts;		/* device clock then */
};

/*
 * Receive coalescing (eth.c, Documentation/hw/interface.rst "Receive coalescing"): the TCP
 * segment an RX queue is building, in the buffers of descriptors ci .. ci + nbufs - 1 (the
 * queue's ci stays at the first until the segment is written back). nbufs 0: none.
 */
#define TERNM_LRO_MAX_HDR	128	/* Ethernet + IP + TCP with options: 14 + 40 + 60 */

struct ternm_lro {
	uint8_t nbufs;
	uint8_t ipver;
	uint8_t psh;		/* a frame had PSH */
	uint16_t l3, l4, hlen;	/* where IP and TCP start, the headers' length */
	uint16_t mss;		/* the first frame's payload */
	uint16_t segs;		/* frames in it */
	uint16_t len0;		/* the first frame's length, Ethernet padding included */
	uint16_t status;	/* the first frame's TERN_ETH_RXD_CSUM_OK | hash flags */
	uint32_t hash;
	uint32_t next_seq;	/* the sequence number the next frame must have */
	uint32_t payload;	/* payload bytes */
	uint32_t psum;		/* one's complement sum of the payload, from its first byte */
	uint64_t start;		/* device time of the first frame */
	uint8_t window[2];	/* the last frame's TCP window */
	uint64_t addr[TERN_ETH_LRO_MAX_BUFS];
	uint16_t buf_len[TERN_ETH_LRO_MAX_BUFS];
	uint16_t used[TERN_ETH_LRO_MAX_BUFS];	/* bytes written in each buffer */
	uint8_t hdr[TERNM_LRO_MAX_HDR];		/* the first frame's headers */
};

struct ternm_ethq {
	bool used;
	bool armed;
	bool broken;		/* ring unreachable: queue stopped until destroyed */
	uint8_t log_depth;
	uint16_t eqn;
	uint16_t pi;		/* last accepted doorbell */
	uint16_t ci;		/* descriptors finished */
	/*
	 * TX: the head frame, held while the MAC makes it wait (its bytes stay in m->tx_gather
	 * while m->tx_gather_q is this queue), and the TSO segments of it already sent.
	 */
	struct ternm_tx_frame held;
	uint16_t tso_sent;
	struct ternm_mem mem;
	/*
	 * Event moderation (eth.c): the bounds, and the moderation under way (moder_n > 0:
	 * frames finished since the one that started it at moder_start, counting it).
	 */
	uint16_t moder_period_us;
	uint16_t moder_frames;
	uint32_t moder_n;
	uint64_t moder_start;
	struct ternm_lro lro;	/* RX: the coalesced segment under way (eth.c) */
};

/*
 * Receive side scaling as SET_RSS last set it (eth.c); hash_fields 0: off. @tbl: the
 * Toeplitz hash of each byte value at each input position under @key (XORed together they
 * make the hash of an input), computed when the key is set.
 */
struct ternm_rss {
	uint32_t hash_fields;		/* TERN_RSS_HASH_* */
	uint8_t key[TERN_RSS_KEY_SIZE];
	uint8_t indir[TERN_RSS_INDIR_SIZE];
	uint32_t tbl[TERN_RSS_KEY_SIZE - 4][256];
};

struct ternm_eth_stats {
	uint64_t tx_frames, tx_bytes;
	uint64_t rx_frames, rx_bytes, rx_multicast, rx_broadcast;
	uint64_t rx_filtered, rx_oversize, rx_runt, rx_no_queue, rx_dma_errors;
	uint64_t tx_bad_len, tx_dma_errors;
	uint64_t eq_overflows;
	uint64_t rx_csum_bad, tx_tso_segments;
	uint64_t rx_lro_frames, rx_lro_segments;
	uint64_t self_dma_dropped;	/* BAR writes made from inside the model (device.c) */
	uint64_t db_ignored;		/* Ethernet doorbells ignored (eth.c) */
	uint64_t tx_timestamps, rx_timestamps;	/* frames timestamped (eth.c) */
};

/* ---- the wire side of the port (wire.c) ----------------------------------------------- */
/* Fault injection (SET_WIRE_FAULTS) and the frame held back for reordering. */
struct ternm_wire {
	/* as set */
	uint32_t drop_ppm, corrupt_ppm, duplicate_ppm, reorder_ppm;
	uint32_t flags;			/* TERN_WIRE_FAULT_F_* */
	uint64_t seed;
	uint64_t rng;			/* generator state, restarted from seed by every SET */
	/* counters since the last device reset */
	uint64_t frames, dropped, corrupted, duplicated, reordered;
	/* a frame held back (reorder): sent after the next frame or when the port goes idle */
	unsigned int held;		/* copies to send: 0 (none), 1, or 2 (also duplicated) */
	size_t held_len;
	uint8_t held_buf[TERN_ETH_MAX_FRAME];
	uint8_t buf[TERN_ETH_MAX_FRAME];	/* a frame being damaged */
};

/* ---- RDMA (rdma*.c, state in rdma.h) ---------------------------------------------------- */
struct ternm_rdma;

/* Outcome of a firmware command handled outside cmd.c; output goes to m->cmd_out. */
struct ternm_cmd_result {
	uint8_t status;
	uint32_t syndrome;
	uint32_t result;
	size_t out_size;
};

/*
 * A command refused with @status because of the input field at byte offset @field, which
 * becomes the syndrome the driver reads back. Returns @status: `return ternm_refuse(...);`.
 */
static inline int ternm_refuse(struct ternm_cmd_result *r, int status, size_t field)
{
	r->syndrome = (uint32_t)field;
	return status;
}

/* ---- the device ---------------------------------------------------------------------------- */
struct tern_model {
	struct tern_model_host host;
	struct tern_model_config cfg;

	/* registers */
	uint32_t scratch;
	uint32_t cmdq_sq_lo, cmdq_sq_hi, cmdq_cq_lo, cmdq_cq_hi;
	uint32_t cmdq_cfg;
	bool cmdq_error;
	bool ready;
	bool resetting;
	uint64_t reset_deadline_ns;
	bool fatal;
	uint16_t fatal_syndrome;
	bool link_up;

	/*
	 * Device clock (device.c, "device clock"): at host time base_ns it read clk_base, and
	 * it runs at 1 + clk_ppb / 10^9 ns per ns since. clk_arg: CLOCK_ARG_LO/HI. Not reset.
	 */
	uint64_t clk_base_ns;
	uint64_t clk_base;
	int32_t clk_ppb;
	uint64_t clk_arg;

	/* port, as set by SET_PORT */
	uint32_t port_flags;
	uint16_t mtu;
	uint8_t mac[6];

	struct ternm_cmdq cmdq;
	struct ternm_eq eq[TERNM_MAX_EQS];
	struct ternm_ethq txq[TERNM_MAX_ETH_TXQS];
	struct ternm_ethq rxq[TERNM_MAX_ETH_RXQS];
	struct ternm_eth_stats stats;
	struct ternm_rss rss;
	struct ternm_wire wire;
	uint16_t ip_id;		/* IPv4 identification of the next RoCE frame */

	/*
	 * RX backpressure: rx_frame returned 0 because RX queue rx_blocked_q had no buffer;
	 * call host->rx_ready once that may change.
	 */
	bool rx_blocked;
	unsigned int rx_blocked_q;

	uint64_t timer_armed_ns;	/* deadline last given to host->timer_arm */

	/*
	 * Re-entry (device.c, "entry and re-entry"): set while a public entry point runs; what
	 * a nested entry asked for (TERNM_DEFER_*), done when the outer one has finished. Not
	 * state a reset forgets: they describe the call in progress.
	 */
	bool in_model;
	unsigned int deferred;
	bool deferred_link_up;		/* TERNM_DEFER_LINK: the carrier last asked for */

	/* ternm_log's rate limit: the window's start, lines sent in it, lines left out */
	uint64_t log_window_ns;
	unsigned int log_lines;
	unsigned long log_dropped;

	/*
	 * Host memory held for what guest commands sized (ternm_host_mem_charge()): rings'
	 * page arrays, MR page lists, QPs with their send state, selective repeat.
	 */
	uint64_t host_mem_bytes;

	struct ternm_rdma *rdma;	/* RDMA engine and objects (allocated at create) */
	struct ternm_mac *port;		/* the MAC: DCB, PFC, line-rate pacing (mac.c; allocated at create) */
	struct ternm_cc *cc;		/* ECN/CNP/DCQCN parameters and counters (rdma_cc.c) */

	/* command scratch buffers */
	uint8_t cmd_in[TERN_CMD_MAX_IN];
	uint8_t cmd_out[TERN_CMD_MAX_OUT];
	uint8_t frame[TERN_ETH_MAX_FRAME];
	uint8_t tx_gather[TERN_ETH_TSO_MAX_FRAME];	/* a TX frame's pieces, put together */
	const struct ternm_ethq *tx_gather_q;		/* whose head frame it holds, if any */
};

/* crc.c: CRC-32 (IEEE), continued as zlib's crc32() continues it */
uint32_t ternm_crc32(uint32_t crc, const uint8_t *p, size_t len);
/* the same on the CRC register itself (not inverted on the way in and out) */
uint32_t ternm_crc32_reg(uint32_t reg, const uint8_t *p, size_t len);
/* the register after @alen bytes at @a and then @blen bytes at @b */
uint32_t ternm_crc32_reg2(uint32_t reg, const uint8_t *a, size_t alen, const uint8_t *b,
			  size_t blen);
/*
 * the register after @len bytes at @p whose first @mlen (16..64, a multiple of 16, at most
 * @len) are OR-ed with @mask[] on the way: a frame's ICRC over the frame itself
 */
uint32_t ternm_crc32_reg_masked(uint32_t reg, const uint8_t *p, size_t len, const uint8_t *mask,
				size_t mlen);

/* device.c */
void ternm_log(struct tern_model *m, enum tern_model_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t ternm_now(struct tern_model *m);
uint64_t ternm_clock_now(struct tern_model *m);
void ternm_kick(struct tern_model *m);
void ternm_fatal(struct tern_model *m, enum tern_fatal_syndrome syndrome);
void ternm_timer_update(struct tern_model *m);
int ternm_dma_read(struct tern_model *m, uint64_t addr, void *buf, size_t len);
int ternm_dma_write(struct tern_model *m, uint64_t addr, const void *buf, size_t len);
/*
 * Host memory a guest command sizes: take @bytes from the device's budget
 * (tern_model_config.host_mem_max) before allocating them; false (logged) when it would pass
 * the bound: the command then fails with TERN_CMD_NO_RESOURCES. Released when freed.
 */
bool ternm_host_mem_charge(struct tern_model *m, uint64_t bytes);
bool ternm_host_mem_try(struct tern_model *m, uint64_t bytes);	/* the same, not logged */
void ternm_host_mem_release(struct tern_model *m, uint64_t bytes);

/* mem.c */
int ternm_mem_init(struct tern_model *m, struct ternm_mem *mem, const uint8_t *desc, uint64_t size,
		uint32_t *bad_off);
int ternm_mem_init_ex(struct tern_model *m, struct ternm_mem *mem, const uint8_t *desc,
		      uint64_t size, bool at_least, uint32_t *bad_off);
int ternm_mem_read(struct tern_model *m, const struct ternm_mem *mem, uint64_t off, void *buf,
		size_t len);
int ternm_mem_write(struct tern_model *m, const struct ternm_mem *mem, uint64_t off, const void *buf,
		 size_t len);
void ternm_mem_free(struct tern_model *m, struct ternm_mem *mem);

/* cmd.c */
void ternm_cmdq_cfg_write(struct tern_model *m, uint32_t val);
void ternm_cmdq_doorbell(struct tern_model *m, uint32_t val);
void ternm_cmdq_run(struct tern_model *m);
void ternm_cmdq_timer(struct tern_model *m, uint64_t now);
uint64_t ternm_cmdq_next_deadline(const struct tern_model *m);
void ternm_cmdq_clear(struct tern_model *m);

/* eq.c */
void ternm_eq_post(struct tern_model *m, unsigned int eqn, uint8_t type, uint32_t d0);
void ternm_eq_post_flag(struct tern_model *m, uint16_t flag, uint8_t type, uint32_t d0);
void ternm_eq_post_sub(struct tern_model *m, unsigned int eqn, uint8_t type, uint8_t subtype,
		       uint32_t d0);
void ternm_eq_post_flag_sub(struct tern_model *m, uint16_t flag, uint8_t type, uint8_t subtype,
			    uint32_t d0);
/* data[0] = @d0, data[1] = @d1 (e.g. TERN_EQE_PFC_STORM) to the first EQ with @flag. */
void ternm_eq_post_flag_data(struct tern_model *m, uint16_t flag, uint8_t type, uint8_t subtype,
			     uint32_t d0, uint32_t d1);
void ternm_eq_doorbell(struct tern_model *m, unsigned int eqn, uint32_t val);
int ternm_eq_create(struct tern_model *m, const uint8_t *in, uint32_t *result, uint32_t *syndrome);
int ternm_eq_destroy(struct tern_model *m, const uint8_t *in, uint32_t *syndrome);
void ternm_eq_clear(struct tern_model *m);

/* eth.c */
int ternm_ethq_create(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *result,
		   uint32_t *syndrome);
int ternm_ethq_destroy(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *syndrome);
void ternm_eth_doorbell(struct tern_model *m, bool rx, unsigned int qid, uint32_t val);
void ternm_eth_arm(struct tern_model *m, bool rx, unsigned int qid, uint32_t val);
void ternm_eth_run(struct tern_model *m);
bool ternm_eth_rx_would_block(const struct tern_model *m, const uint8_t *frame, size_t len);
int ternm_eth_set_rss(struct tern_model *m, const uint8_t *in, uint32_t *syndrome);
void ternm_eth_lro_flush_all(struct tern_model *m);
uint32_t ternm_toeplitz(const uint8_t key[TERN_RSS_KEY_SIZE], const uint8_t *in, size_t len);
void ternm_eth_clear(struct tern_model *m);
int ternm_ethq_modify(struct tern_model *m, bool rx, const uint8_t *in, uint32_t *syndrome);
uint64_t ternm_eth_next_deadline(const struct tern_model *m);
void ternm_eth_timer(struct tern_model *m, uint64_t now);
size_t ternm_eth_rx_frame(struct tern_model *m, const uint8_t *frame, size_t len);

/* wire.c: the only way frames reach host->tx_frame */
void ternm_wire_tx(struct tern_model *m, const uint8_t *frame, size_t len);
void ternm_wire_idle(struct tern_model *m);
void ternm_wire_clear(struct tern_model *m);
int ternm_wire_set(struct tern_model *m, const uint8_t *in, uint32_t *syndrome);
void ternm_wire_query(struct tern_model *m, uint8_t *out);

/*
 * mac.c: the MAC between the engines and the wire: DCB classification, per-priority PFC
 * (honouring received pauses, generating XOFF/XON from the lossless receive buffer), the storm
 * guard, line-rate serialization and per-priority counters. Every transmitted frame goes
 * through ternm_mac_tx() (which hands it to ternm_wire_tx()); producers of frames that can wait
 * (Ethernet TX descriptors, RoCE request/response packets) first ask ternm_mac_may_send().
 * Control frames (ACK/NAK, CNP, PFC) are sent without asking.
 */
struct ternm_mac;
int ternm_mac_init(struct tern_model *m);	/* at create; -1 on ENOMEM */
void ternm_mac_fini(struct tern_model *m);
void ternm_mac_clear(struct tern_model *m);	/* device reset: DCB back to the reset state */
/* Priority of a frame built with these headers (@pcp < 0: untagged; @dscp < 0: not IP). */
unsigned int ternm_mac_prio(const struct tern_model *m, int dscp, int pcp);
unsigned int ternm_mac_frame_prio(const struct tern_model *m, const uint8_t *frame, size_t len);
/*
 * May a frame of priority @prio be sent now? False while the priority is paused by the peer
 * or the line is busy beyond the transmit burst allowance; *@retry_ns (if not NULL) is then
 * the time at which to ask again (the MAC's timer also kicks the device then).
 */
bool ternm_mac_may_send(struct tern_model *m, unsigned int prio, uint64_t *retry_ns);
void ternm_mac_tx(struct tern_model *m, const uint8_t *frame, size_t len);
uint64_t ternm_mac_next_deadline(const struct tern_model *m);
void ternm_mac_timer(struct tern_model *m, uint64_t now);
void ternm_dcb_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		   struct ternm_cmd_result *r);
/* Line rate of the port in Mb/s (tern_model_config.link_speed_mbps, or the default). */
uint32_t ternm_link_speed_mbps(const struct tern_model *m);

/* rdma_cc.c: SET/QUERY_CC_PARAMS (the rest of congestion control is internal to rdma*.c) */
void ternm_cc_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		  struct ternm_cmd_result *r);

/* rdma_obj.c, rdma_sched.c, rdma_wire.c */
int ternm_rdma_init(struct tern_model *m);
void ternm_rdma_clear(struct tern_model *m);
void ternm_rdma_fini(struct tern_model *m);
int ternm_rdma_cmd_in_len(uint16_t opcode);
void ternm_rdma_cmd(struct tern_model *m, uint16_t opcode, const uint8_t *in, uint16_t out_len,
		    struct ternm_cmd_result *r);
void ternm_rdma_doorbell(struct tern_model *m, uint64_t off, uint64_t val, unsigned int size);
void ternm_rdma_run(struct tern_model *m);
void ternm_rdma_timer(struct tern_model *m, uint64_t now);
uint64_t ternm_rdma_next_deadline(const struct tern_model *m);
bool ternm_rdma_eq_in_use(struct tern_model *m, unsigned int eqn);
bool ternm_rdma_is_roce(const struct tern_model *m, const uint8_t *frame, size_t len);
void ternm_rdma_rx(struct tern_model *m, const uint8_t *frame, size_t len);

#endif /* TERN_MODEL_INT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern PCI core driver: shared definitions between the files of tern_core.ko.
 *
 * Layout of the module:
 *   main.c     PCI probe/remove, BAR mapping, reset handshake, MSI-X, bring-up order
 *   cmdq.c     firmware command queue (polled, then event driven), timeouts
 *   eq.c       event queues and their MSI-X vectors, event dispatch
 *   en_main.c  Ethernet netdev: probe/remove, open/stop, channels, rx mode, MTU, stats
 *   en_tx.c    Ethernet transmit: TX ring, ndo_start_xmit, TX completions
 *   en_rx.c    Ethernet receive: RX ring and buffers, received frames to the stack
 *   en_txrx.c  Ethernet events and NAPI poll: completions, re-arming the queues
 *   ethtool.c  ethtool operations and statistics
 *   devlink.c  devlink instance: info, health reporter for the firmware
 *   debugfs.c  debugfs: command-queue state and command tests
 *   aux.c      auxiliary device "tern_core.rdma.<n>" and the API of <linux/tern/tern_aux.h>
 *
 * tern_core_test.c is a separate module, tern_core_test.ko, built only for kernels with
 * KUnit: suites for the logic above that needs no device (the static inlines below and in
 * en.h, command encoding and completion decoding, ethtool tables, debugfs helpers).
 */
#ifndef TERN_CORE_H
#define TERN_CORE_H

#include <linux/completion.h>
#include <linux/export.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/devlink.h>

#include <linux/tern/tern_hw.h>
#include <linux/tern/tern_cmd.h>
#include <linux/tern/tern_dcb.h>
#include <linux/tern/tern_aux.h>

#define TERN_DRV_NAME		"tern_core"

/* KUnit (tern_core_test.ko) reaches a few internal functions and objects of tern_core.ko:
 * TERN_VISIBLE_IF_KUNIT keeps them static unless the kernel has KUnit, and
 * EXPORT_SYMBOL_IF_TERN_KUNIT() exports them, in the TERN_KUNIT namespace, only then
 * (6.1 has neither VISIBLE_IF_KUNIT nor EXPORT_SYMBOL_IF_KUNIT).
 */
#if IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_TERN_KUNIT(sym)	EXPORT_SYMBOL_NS_GPL(sym, TERN_KUNIT)
#define TERN_VISIBLE_IF_KUNIT
#else
#define EXPORT_SYMBOL_IF_TERN_KUNIT(sym)
#define TERN_VISIBLE_IF_KUNIT			static
#endif

struct tern_dev;
struct tern_eq;

/**
 * struct tern_cmd_slot - one command in flight
 * @done: completed by the event handler (or the poller) when the completion arrives
 * @token: token of the command occupying the slot (slot index | generation << 8)
 * @busy: the slot is reserved by a caller or by an abandoned command
 * @completed: the completion (or an abort) arrived; @status and the rest are valid
 * @abandoned: the caller timed out; the late completion, if any, frees the slot
 * @status: completion status (enum tern_cmd_status)
 * @syndrome: completion syndrome
 * @result: completion result
 * @out_len: bytes the device wrote to the output mailbox
 * @in_buf: input mailbox (TERN_CMD_MAX_IN bytes, coherent DMA)
 * @in_dma: DMA address of @in_buf
 * @out_buf: output mailbox (TERN_CMD_MAX_OUT bytes, coherent DMA)
 * @out_dma: DMA address of @out_buf
 *
 * Fields other than the mailboxes are protected by tern_cmdq.lock.
 */
struct tern_cmd_slot {
	struct completion done;
	u16 token;
	bool busy;
	bool completed;
	bool abandoned;
	u8 status;
	u32 syndrome;
	u32 result;
	u16 out_len;
	void *in_buf;
	dma_addr_t in_dma;
	void *out_buf;
	dma_addr_t out_dma;
};

/**
 * struct tern_cmdq - the firmware command queue
 * @lock: protects the rings' indices, the slots' state, @event_mode, @stopped and @users;
 *	taken from the async EQ's hard interrupt handler as well, so always with interrupts
 *	disabled
 * @slots_sem: counts free slots; a caller sleeps here when all are in flight
 * @sq: command ring (coherent DMA), @depth entries
 * @cq: completion ring (coherent DMA), @depth entries
 * @sq_dma: DMA address of @sq
 * @cq_dma: DMA address of @cq
 * @depth: entries in each ring (power of two)
 * @sq_pi: next command ring entry to write (free-running)
 * @cq_ci: next completion ring entry to read (free-running)
 * @log_depth: log2 of @depth
 * @event_mode: completions are signalled through the command EQ; false while polling
 * @stopped: no new command is accepted (device dead, being reset or removed)
 * @users: callers inside tern_cmd_exec(); tern_cmdq_stop() waits for none
 * @drain_wq: woken when @users drops to zero
 * @slots: one per ring entry
 * @generation: bumped per command to make tokens of reused slots differ
 * @timeouts: commands that timed out since probe
 * @errors: commands that completed with a status other than OK
 * @stale: completions whose token matched no command waiting for one
 * @late: completions of timed-out commands (they freed their slot)
 * @timeout_ms: how long a command may take before its caller gets -ETIMEDOUT: what the
 *	device states in TERN_REG_CMD_TIMEOUT, read once at probe before the queue exists
 */
struct tern_cmdq {
	spinlock_t lock;	/* see above; IRQ-safe */
	struct semaphore slots_sem;
	struct tern_cmd_sqe *sq;
	struct tern_cmd_cqe *cq;
	dma_addr_t sq_dma;
	dma_addr_t cq_dma;
	u32 depth;
	u32 sq_pi;
	u32 cq_ci;
	u8 log_depth;
	bool event_mode;
	bool stopped;
	unsigned int users;
	wait_queue_head_t drain_wq;
	struct tern_cmd_slot *slots;
	u8 generation;
	atomic_t timeouts;
	atomic_t errors;
	atomic_t stale;
	atomic_t late;
	u32 timeout_ms;
};

/**
 * struct tern_cmdq_stats - snapshot of the command queue's state (debugfs, devlink health)
 * @depth: slots (ring entries)
 * @timeout_ms: the command timeout (from the device)
 * @in_flight: commands posted and being waited for
 * @abandoned: slots held by commands that timed out and have not completed since
 * @timeouts: commands that timed out (including waits for a free slot)
 * @errors: completions with a status other than OK
 * @stale: completions whose token matched no waiting command
 * @late: completions of timed-out commands
 * @event_mode: completions are signalled by the command EQ
 * @stopped: new commands are refused
 */
struct tern_cmdq_stats {
	u32 depth;
	u32 timeout_ms;
	u32 in_flight;
	u32 abandoned;
	u32 timeouts;
	u32 errors;
	u32 stale;
	u32 late;
	bool event_mode;
	bool stopped;
};

/**
 * typedef tern_eq_handler_t - called from the EQ's interrupt for each event
 * @eq: the event queue
 * @eqe: the event (valid only during the call)
 * @ctx: the context given to tern_eq_create()
 *
 * Runs in hard interrupt context, from the EQ's interrupt handler: it must not sleep, and
 * any lock it takes must be taken with interrupts disabled everywhere else. Work that
 * sleeps goes to a work item.
 */
typedef void (*tern_eq_handler_t)(struct tern_eq *eq, const struct tern_eqe *eqe, void *ctx);

/**
 * struct tern_eq - an event queue bound to one MSI-X vector
 * @tdev: owning device
 * @ring: entries (coherent DMA)
 * @ring_dma: DMA address of @ring
 * @log_depth: log2 of the number of entries
 * @ci: consumer index (free-running); only touched by the interrupt handler (one vector per
 *	EQ, so never concurrently), and by tern_eq_create() before the interrupt is hooked
 * @eqn: EQ number assigned by the firmware
 * @vector: MSI-X vector index
 * @irq: Linux IRQ number
 * @handler: dispatch function
 * @ctx: context for @handler
 * @name: IRQ name
 */
struct tern_eq {
	struct tern_dev *tdev;
	struct tern_eqe *ring;
	dma_addr_t ring_dma;
	u8 log_depth;
	u32 ci;
	u32 eqn;
	u16 vector;
	int irq;
	tern_eq_handler_t handler;
	void *ctx;
	char name[32];
};

/**
 * struct tern_dcb - DCB and congestion-control settings the driver keeps for the device
 * @lock: protects @cfg, @cc and @cc_ok, and serialises SET_DCB and SET_CC_PARAMS. The
 *	innermost lock of the driver: taken under RTNL (dcbnl, ethtool), the devlink instance
 *	lock (params) and tern_dev.state_lock (re-apply after a reset); only firmware commands
 *	run inside it
 * @cfg: the DCB configuration (PFC, ETS, DSCP map, storm guard) last accepted by the
 *	firmware, or the reset state; sent whole by every SET_DCB
 * @cc: the DCQCN, HPCC and TIMELY parameters (devlink params, debugfs cc_params/) last
 *	accepted,
 *	or the driver's defaults
 * @supported: the device has TERN_DEV_CAP_DCB (immutable after probe)
 * @cc_ok: the firmware executes SET_CC_PARAMS (cleared when it answers BAD_OPCODE)
 * @storm_detected: TERN_EQE_PFC_STORM events reporting a storm (atomic)
 * @storm_recovered: TERN_EQE_PFC_STORM events reporting the end of one (atomic)
 * @storm_active: storms in progress, bit TERN_DCB_STORM_BIT(kind, prio) (atomic bitops;
 *	set and cleared by the async EQ's handler, cleared by a reset)
 * @storm_new: storms detected and not yet reported to the devlink health reporter "pfc"
 *	(atomic bitops; taken whole by its work item)
 *
 * Lives in struct tern_dev, so it survives device resets, recoveries, devlink reloads and
 * the re-creation of the netdev; tern_dcb_apply() sends it to the firmware after each.
 */
struct tern_dcb {
	struct mutex lock;	/* see above */
	struct tern_dcb_cfg cfg;
	struct tern_cc_params cc;
	bool supported;
	bool cc_ok;
	atomic64_t storm_detected;
	atomic64_t storm_recovered;
	unsigned long storm_active;
	unsigned long storm_new;
};

/**
 * struct tern_cc_field - one value of struct tern_cc_params, as devlink or debugfs sets it
 * @name: the devlink param's or the debugfs cc_params/ file's name
 * @offset: offset of the field in struct tern_cc_params
 * @size: the field's size: 1 (u8), 2 (__le16) or 4 (__le32)
 * @min: smallest value
 * @max: largest value (unused with @line_rate)
 * @line_rate: a rate in Mb/s, at most the port's line rate
 */
struct tern_cc_field {
	const char *name;
	u16 offset;
	u8 size;
	bool line_rate;
	u32 min;
	u32 max;
};

/* Entries of a struct tern_cc_field table, by the field's type in struct tern_cc_params. */
#define TERN_CC_FIELD_SZ(n, f, sz, lo, hi, rate) {				\
	.name = n, .offset = offsetof(struct tern_cc_params, f), .size = sz,	\
	.min = lo, .max = hi, .line_rate = rate }
#define TERN_CC_U8(n, f, lo, hi)	TERN_CC_FIELD_SZ(n, f, 1, lo, hi, false)
#define TERN_CC_U16(n, f, lo, hi)	TERN_CC_FIELD_SZ(n, f, 2, lo, hi, false)
#define TERN_CC_U32(n, f, lo, hi)	TERN_CC_FIELD_SZ(n, f, 4, lo, hi, false)
#define TERN_CC_RATE(n, f, lo)		TERN_CC_FIELD_SZ(n, f, 4, lo, 0, true)

/* The tuning parameters of DCQCN, HPCC and TIMELY, a debugfs file each under cc_params/. */
#define TERN_DBG_CC_NUM		28

/**
 * struct tern_dbg_cc_file - what a cc_params/ debugfs file stands for (its i_private)
 * @tdev: the device
 * @field: the parameter the file reads and writes
 */
struct tern_dbg_cc_file {
	struct tern_dev *tdev;
	const struct tern_cc_field *field;
};

/* The wire fault injector's values, a debugfs file each (debugfs.c). */
enum tern_dbg_wf_field {
	TERN_DBG_WF_DROP,
	TERN_DBG_WF_CORRUPT,
	TERN_DBG_WF_DUPLICATE,
	TERN_DBG_WF_REORDER,
	TERN_DBG_WF_ROCE_ONLY,
	TERN_DBG_WF_SEED,
	/* read-only: the counters */
	TERN_DBG_WF_FRAMES,
	TERN_DBG_WF_DROPPED,
	TERN_DBG_WF_CORRUPTED,
	TERN_DBG_WF_DUPLICATED,
	TERN_DBG_WF_REORDERED,
	TERN_DBG_WF_NUM
};

/**
 * struct tern_dbg_wf_file - what a wire_faults/ debugfs file stands for (its i_private)
 * @tdev: the device
 * @field: the value the file reads and writes
 */
struct tern_dbg_wf_file {
	struct tern_dev *tdev;
	enum tern_dbg_wf_field field;
};

/**
 * struct tern_dbg - debugfs state of a device (debugfs.c)
 * @nop_delay_us: cmd_test/nop_delay_us: the delay "nop" asks for (0: none)
 * @nop_len: cmd_test/nop_len: bytes "nop" has the device echo (checked when "nop" runs)
 * @fail_status: cmd_test/fail_status: the status "fail" has the device complete with
 *	(at most U8_MAX, checked when "fail" runs)
 * @fail_syndrome: cmd_test/fail_syndrome: the syndrome that goes with it
 * @wf_files: what each file of wire_faults/ stands for
 * @cc_files: what each file of cc_params/ stands for
 *
 * The debugfs files write the first four without a lock; the commands read each once.
 */
struct tern_dbg {
	u32 nop_delay_us;
	u32 nop_len;
	u32 fail_status;
	u32 fail_syndrome;
	struct tern_dbg_wf_file wf_files[TERN_DBG_WF_NUM];
	struct tern_dbg_cc_file cc_files[TERN_DBG_CC_NUM];
};

/* Storm bits: TERN_PFC_STORM_TX_PAUSE on bits 0..7, TERN_PFC_STORM_RX_PAUSE on 8..15. */
#define TERN_DCB_STORM_BIT(kind, prio)	(((kind) - 1) * TERN_NUM_PRIO + (prio))
#define TERN_DCB_STORM_BITS		(2 * TERN_NUM_PRIO)

/**
 * struct tern_dev - one tern PCI function
 * @pdev: PCI device
 * @regs: BAR0 registers
 * @db: BAR2 doorbell page 0 (the kernel's page)
 * @reset_timeout_ms: how long a reset may take: what the device states in
 *	TERN_REG_RESET_TIMEOUT, read at probe
 * @db_bar_start: bus address of BAR2 (user doorbell pages are mapped from there)
 * @fw_reporter: devlink health reporter for firmware errors and command timeouts
 *	(struct tern_dev is the private data of its devlink instance: tern_to_devlink())
 * @pfc_reporter: devlink health reporter "pfc" for PFC storms (devices with DCB), or NULL
 * @cmdq: the command queue
 * @caps: QUERY_DEVICE output (immutable after probe)
 * @num_vectors: MSI-X vectors allocated
 * @num_comp_vectors: of those, RDMA completion-EQ vectors, from TERN_FIRST_COMP_VECTOR on
 * @num_eth_extra_vectors: of those, vectors for the Ethernet channels after the first (which
 *	has TERN_EN_EQ_VECTOR), the last ones: from @num_vectors - @num_eth_extra_vectors on
 * @async_eq: EQ 0: command completions, link changes, fatal errors (vector 0)
 * @netdev: the Ethernet function
 * @debugfs: debugfs directory of this device
 * @dbg: values the debugfs files hold (command tests) and what the files stand for
 * @state_lock: serialises device-wide reconfiguration (reset, recovery, removal) and
 *	protects @started, @eq_ready and @en_ready. Taken outside RTNL: never take it with
 *	RTNL held (recovery holds it while it suspends and resumes the netdev, which take
 *	RTNL).
 * @flags: TERN_FLAG_* bits (atomic bitops; set from any context)
 * @started: probe has finished; recovery may run; cleared at removal
 * @eq_ready: @async_eq exists
 * @en_ready: tern_en_probe() succeeded and tern_en_remove() has not been called
 * @link_up: latest link state from a LINK_CHANGE event (read by @link_work)
 * @link_work: delivers link changes to tern_en_link_change() in process context
 * @health_lock: protects @health_enabled, @health_what and @health_detail
 * @health_enabled: reports are accepted (the reporter exists and devlink is registered)
 * @health_what: pending report for @health_work, NULL when none
 * @health_detail: opcode or fatal syndrome of the pending report
 * @health_work: passes reports to devlink health (which may run recovery) from process
 *	context
 * @pfc_work: passes PFC storms (struct tern_dcb @storm_new, @storm_active) to
 *	@pfc_reporter from process context; queued only while @health_enabled
 * @recoveries: bumped when a recovery ends; a command issued before that does not report
 *	its timeout (the recovery dealt with that incident)
 * @rdma_adev: auxiliary device of the RDMA function, NULL when it does not exist; protected
 *	by @state_lock (added after the Ethernet function is up, deleted before it goes down)
 * @async_lock: protects @async_handler and @async_ctx. The async EQ's interrupt handler
 *	holds it while it calls @async_handler, so once tern_core_clear_async_handler() has
 *	taken and released it the handler is not running and will not run again
 * @async_handler: receives async EQ events of types 0x10..0x2f (RDMA, congestion) but
 *	TERN_EQE_PFC_STORM (dcb.c), or NULL
 * @async_ctx: argument of @async_handler
 * @dcb: DCB and congestion-control settings (dcb.c), re-applied after every reset
 * @ptp: the device clock's PTP hardware clock (ptp.c), NULL when there is none; protected
 *	by @state_lock
 * @ptp_info: its operations
 * @ptp_index: its index, -1 when there is none (READ_ONCE: ethtool reads it locklessly)
 * @ptp_lock: serialises writes to the clock's adjustment registers
 */
struct tern_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	void __iomem *db;
	u32 reset_timeout_ms;
	resource_size_t db_bar_start;
	struct devlink_health_reporter *fw_reporter;
	struct devlink_health_reporter *pfc_reporter;
	struct tern_cmdq cmdq;
	struct tern_cmd_query_device_out caps;
	int num_vectors;
	int num_comp_vectors;
	int num_eth_extra_vectors;
	struct tern_eq async_eq;
	struct net_device *netdev;
	struct dentry *debugfs;
	struct tern_dbg dbg;
	struct mutex state_lock;	/* see above */
	unsigned long flags;
	bool started;
	bool eq_ready;
	bool en_ready;
	bool link_up;
	struct work_struct link_work;
	spinlock_t health_lock;		/* see above; IRQ-safe */
	bool health_enabled;
	const char *health_what;
	u32 health_detail;
	struct work_struct health_work;
	struct work_struct pfc_work;
	atomic_t recoveries;
	struct tern_aux_dev *rdma_adev;
	spinlock_t async_lock;		/* see above; IRQ-safe */
	tern_event_handler_t async_handler;
	void *async_ctx;
	struct tern_dcb dcb;
	bool roce_sr;			/* devlink roce_selective_repeat (READ_ONCE) */
	u8 roce_sr_log_cap;		/* devlink roce_sr_log_cap, 0 or 4..8 (READ_ONCE) */
	bool roce_adaptive_rto;		/* devlink roce_adaptive_rto (READ_ONCE) */
	struct ptp_clock *ptp;
	struct ptp_clock_info ptp_info;
	int ptp_index;
	spinlock_t ptp_lock;		/* see above */
};

/* Bits of tern_dev.flags. */
enum tern_dev_flag {
	TERN_FLAG_DEAD,		/* FATAL or gone: commands fail fast until a reset */
	TERN_FLAG_RECOVERING,	/* recovery runs: health reports are not taken */
	TERN_FLAG_TEST_RESET,	/* devlink health test: the next recovery resets the device */
	TERN_FLAG_PCI_ERROR,	/* PCI error recovery under way (or failed): no other one */
	TERN_FLAG_PCI_DISABLED,	/* pci_disable_device() done by error recovery */
};

/**
 * tern_cmd_token() - token of a command: slot index and generation
 * @idx: slot index, below 256
 * @gen: generation counter of the command queue
 *
 * Return: @idx in the low byte, @gen in the high byte.
 */
static inline u16 tern_cmd_token(u32 idx, u8 gen)
{
	return (u16)((idx & 0xff) | ((u16)gen << 8));
}

/**
 * tern_cmd_token_slot() - slot index a token names
 * @token: token echoed by a completion (any value the device wrote)
 *
 * Return: the low byte of @token; the caller checks it against the queue depth.
 */
static inline u32 tern_cmd_token_slot(u16 token)
{
	return token & 0xff;
}

/**
 * tern_eq_db_value() - value of an EQ doorbell
 * @ci: free-running consumer index (the doorbell carries it modulo 2^24)
 * @arm: ask for an interrupt at the next event
 *
 * Return: the 32-bit value to write to TERN_DB_EQ(eqn).
 */
static inline u32 tern_eq_db_value(u32 ci, bool arm)
{
	return (ci & TERN_EQ_DB_CI_MASK) | (arm ? TERN_EQ_DB_ARM : 0);
}

/**
 * tern_fw_version_format() - print a firmware version as devlink and ethtool show it
 * @buf: output
 * @len: size of @buf
 * @fw: version as TERN_REG_FW_VERSION encodes it: major << 24 | minor << 16 | patch
 *
 * Return: the snprintf() result: "major.minor.patch" (always NUL-terminated if @len > 0).
 */
static inline int tern_fw_version_format(char *buf, size_t len, u32 fw)
{
	return snprintf(buf, len, "%u.%u.%u", fw >> 24, (fw >> 16) & 0xff, fw & 0xffff);
}

static inline struct devlink *tern_to_devlink(struct tern_dev *tdev)
{
	return priv_to_devlink(tdev);
}

static inline u32 tern_rd(struct tern_dev *tdev, u32 reg)
{
	return ioread32(tdev->regs + reg);
}

static inline void tern_wr(struct tern_dev *tdev, u32 reg, u32 val)
{
	iowrite32(val, tdev->regs + reg);
}

static inline void tern_db(struct tern_dev *tdev, u32 offset, u32 val)
{
	iowrite32(val, tdev->db + offset);
}

/* main.c */
bool tern_dev_alive(struct tern_dev *tdev);
void tern_dev_mark_dead(struct tern_dev *tdev, u32 syndrome);
int tern_dev_recover(struct tern_dev *tdev);
int tern_dev_reload_down(struct tern_dev *tdev);
int tern_dev_reload_up(struct tern_dev *tdev);

/* cmdq.c */
int tern_cmdq_init(struct tern_dev *tdev);
void tern_cmdq_cleanup(struct tern_dev *tdev);
void tern_cmdq_stop(struct tern_dev *tdev);
void tern_cmdq_abort(struct tern_dev *tdev);
int tern_cmdq_restart(struct tern_dev *tdev);
bool tern_cmdq_healthy(struct tern_dev *tdev);
void tern_cmdq_get_stats(struct tern_dev *tdev, struct tern_cmdq_stats *st);
void tern_cmdq_set_event_mode(struct tern_dev *tdev, bool on);
void tern_cmdq_handle_completions(struct tern_dev *tdev);
int tern_cmd_exec(struct tern_dev *tdev, u16 opcode, const void *in, size_t in_len,
		  void *out, size_t out_len, u32 *result);
int tern_cmd_status_to_errno(u8 status);
const char *tern_cmd_opcode_name(u16 opcode);
void tern_cmd_fill_sqe(struct tern_cmd_sqe *sqe, u16 opcode, u16 token, const void *in,
		       size_t in_len, size_t out_len, dma_addr_t in_dma, dma_addr_t out_dma);
#if IS_ENABLED(CONFIG_KUNIT)
const char *tern_cmd_status_name(u8 status);
#endif

/* eq.c */
int tern_eq_create(struct tern_dev *tdev, struct tern_eq *eq, u16 vector, u8 log_depth,
		   u16 flags, tern_eq_handler_t handler, void *ctx, const char *name);
void tern_eq_destroy(struct tern_dev *tdev, struct tern_eq *eq);
void tern_eq_arm(struct tern_eq *eq);

/* en_main.c. tern_en_link_change() is called in process context (a work item, state_lock
 * held), only between a successful tern_en_probe() and tern_en_remove(). Recovery and
 * reload keep the netdev: tern_en_suspend() before the reset, tern_en_resume() after it.
 */
int tern_en_probe(struct tern_dev *tdev);
void tern_en_remove(struct tern_dev *tdev);
void tern_en_suspend(struct tern_dev *tdev);
int tern_en_resume(struct tern_dev *tdev);
void tern_en_link_change(struct tern_dev *tdev, bool up);

/* ptp.c: the PHC exists while the device is up (state_lock held for both). */
void tern_ptp_add(struct tern_dev *tdev);
void tern_ptp_del(struct tern_dev *tdev);
int tern_ptp_index(struct tern_dev *tdev);

/* ethtool.c */
extern const struct ethtool_ops tern_ethtool_ops;

/* devlink.c */
struct tern_dev *tern_devlink_alloc(struct device *dev);
void tern_devlink_free(struct tern_dev *tdev);
int tern_devlink_register(struct tern_dev *tdev);
void tern_devlink_unregister(struct tern_dev *tdev);
void tern_devlink_report_fw_error(struct tern_dev *tdev, const char *what, u32 detail);
void tern_devlink_clear_reports(struct tern_dev *tdev);
void tern_devlink_pfc_storm(struct tern_dev *tdev);

/* aux.c. tern_aux_add() and tern_aux_del() are called with state_lock held: add after the
 * Ethernet function is up, delete before anything of the function is torn down.
 */
#define TERN_FIRST_COMP_VECTOR	2	/* vectors 0 (async EQ) and 1 (Ethernet) come first */
/* Ethernet channels beyond the first, each with a vector of its own after the RDMA ones. */
#define TERN_ETH_EXTRA_VECTORS	7
int tern_aux_add(struct tern_dev *tdev);
void tern_aux_del(struct tern_dev *tdev);
void tern_aux_async_event(struct tern_dev *tdev, const struct tern_eqe *eqe);
void tern_aux_device_fatal(struct tern_dev *tdev, u32 syndrome);
void tern_aux_ida_destroy(void);

/* dcb.c: the DCB/DCQCN shadow, dcbnl, PFC statistics and storm events. The netdev helpers
 * are called by en_main.c around register_netdev()/unregister_netdev().
 */
void tern_dcb_init(struct tern_dev *tdev);
void tern_dcb_destroy(struct tern_dev *tdev);
int tern_dcb_apply(struct tern_dev *tdev);
void tern_dcb_netdev_setup(struct tern_dev *tdev, struct net_device *netdev);
void tern_dcb_netdev_registered(struct tern_dev *tdev, struct net_device *netdev);
void tern_dcb_storm_event(struct tern_dev *tdev, const struct tern_eqe *eqe);
int tern_dcb_query_pfc_stats(struct tern_dev *tdev, struct tern_cmd_pfc_stats_out *out);
u32 tern_dcb_get_storm_ms(struct tern_dev *tdev);
int tern_dcb_set_storm_ms(struct tern_dev *tdev, u32 ms);
void tern_dcb_get_cc(struct tern_dev *tdev, struct tern_cc_params *cc);
int tern_dcb_query_cc(struct tern_dev *tdev, struct tern_cc_params *cc);
u32 tern_cc_field_get(const struct tern_cc_params *cc, const struct tern_cc_field *f);
bool tern_cc_field_valid(struct tern_dev *tdev, const struct tern_cc_field *f, u32 v);
int tern_dcb_set_cc_field(struct tern_dev *tdev, const struct tern_cc_field *f, u32 v);
u32 tern_dcb_line_rate(struct tern_dev *tdev);
#if IS_ENABLED(CONFIG_KUNIT) && IS_ENABLED(CONFIG_DCB)
struct ieee_ets;
struct dcb_app;
int tern_dcb_check_ets(struct net_device *netdev, const struct ieee_ets *ets);
int tern_dcb_check_app(struct net_device *netdev, const struct dcb_app *app);
#endif

/* debugfs.c */
void tern_debugfs_register(void);
void tern_debugfs_unregister(void);
void tern_debugfs_init(struct tern_dev *tdev);
void tern_debugfs_cleanup(struct tern_dev *tdev);
#if IS_ENABLED(CONFIG_KUNIT)
int tern_dbg_nop_in(const struct tern_dbg *dbg, u32 flag, struct tern_cmd_nop_in *nop,
		    size_t *tail);
u64 tern_dbg_wf_value(const struct tern_cmd_query_wire_faults_out *q,
		      enum tern_dbg_wf_field field);
int tern_dbg_wf_update(struct tern_wire_faults *wf, enum tern_dbg_wf_field field, u64 val);
#endif

#endif /* TERN_CORE_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern debugfs: /sys/kernel/debug/tern/<pci-name>/, one value per file
 *
 *   cmdq          read: command queue depth, commands in flight, counters, mode
 *   cmd_test/     firmware NOP commands, for testing the command path
 *     nop           write 1: run a NOP (with nop_delay_us, nop_len); the write returns the
 *                   command's errno
 *     nop_delay_us  the delay the NOP asks for, in microseconds (0: none)
 *     nop_len       bytes the NOP echoes through the mailboxes and the driver checks
 *                   (at most TERN_DBG_NOP_MAX_TAIL; more: "nop" fails with -EINVAL)
 *     fail          write 1: run a NOP the device completes with fail_status and
 *                   fail_syndrome
 *     fail_status   enum tern_cmd_status (a number, 0..255; more: "fail" fails with -EINVAL)
 *     fail_syndrome
 *     drop          write 1: run a NOP that never completes (-ETIMEDOUT)
 *     fatal         write 1: run a NOP that kills the firmware (-EIO, then the recovery
 *                   devlink health starts)
 *                 fail, drop and fatal need a device with test hooks (QEMU test-hooks=on);
 *                 elsewhere the device rejects them with BAD_PARAM (-EINVAL).
 *   wire_faults/  TX fault injection, for testing recovery (SET/QUERY_WIRE_FAULTS)
 *     drop_ppm, corrupt_ppm, duplicate_ppm, reorder_ppm
 *                   probability in parts per million (0..TERN_WIRE_FAULT_PPM_MAX)
 *     roce_only     0 or 1: damage RoCEv2 frames only
 *     seed          the pseudo-random generator's seed
 *     off           write 1: everything 0
 *                 Reads query the device; a write sends the device's setting with that
 *                 value changed (restarting its generator from seed). Bad value: -EINVAL,
 *                 no change.
 *     frames, dropped, corrupted, duplicated, reordered
 *                   read-only: the counters since the last device reset
 *   dcb           read: what the firmware runs, read back from it (QUERY_DCB, QUERY_CC_PARAMS),
 *                 not the driver's copy: "key: value" lines, the CC parameters under their
 *                 devlink param or cc_params/ file names (devices with TERN_DEV_CAP_DCB)
 *   cc_params/    DCQCN's, HPCC's and TIMELY's tuning constants (devices with TERN_DEV_CAP_DCB), a
 *                 file each, named as mlx5_ib's cc_params/ files where the meaning is the
 *                 same (rp_*, np_*; hpcc_* are tern's): a read queries the firmware
 *                 (QUERY_CC_PARAMS), a write sends the driver's parameter set with that
 *                 value changed (SET_CC_PARAMS), kept across resets and reloads as the
 *                 devlink params are. A value out of range: -EINVAL, no change.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "tern_core.h"

#define TERN_DBG_NOP_MAX_TAIL	(TERN_CMD_MAX_IN - sizeof(struct tern_cmd_nop_in))

static struct dentry *tern_debugfs_root;

/* Serialises the query-modify-set of the wire_faults/ writes (of all devices). */
static DEFINE_MUTEX(tern_dbg_wf_lock);

static int tern_dbg_cmdq_show(struct seq_file *s, void *unused)
{
	struct tern_dev *tdev = s->private;
	struct tern_cmdq_stats st;

	tern_cmdq_get_stats(tdev, &st);
	seq_printf(s, "depth: %u\n", st.depth);
	seq_printf(s, "timeout_ms: %u\n", st.timeout_ms);
	seq_printf(s, "in_flight: %u\n", st.in_flight);
	seq_printf(s, "abandoned: %u\n", st.abandoned);
	seq_printf(s, "timeouts: %u\n", st.timeouts);
	seq_printf(s, "errors: %u\n", st.errors);
	seq_printf(s, "stale_completions: %u\n", st.stale);
	seq_printf(s, "late_completions: %u\n", st.late);
	seq_printf(s, "event_mode: %u\n", st.event_mode);
	seq_printf(s, "stopped: %u\n", st.stopped);
	seq_printf(s, "dead: %u\n", test_bit(TERN_FLAG_DEAD, &tdev->flags));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tern_dbg_cmdq);

/**
 * tern_dbg_nop_in() - the NOP a cmd_test/ trigger runs
 * @dbg: the values of the cmd_test/ files
 * @flag: 0 for "nop", else the TERN_NOP_F_FAIL, _DROP or _FATAL of that trigger
 * @nop: NOP input header, filled in on success only
 * @tail: length of the echoed tail after the header (meaningful on success only)
 *
 * Return: 0, or -EINVAL when nop_len is above TERN_DBG_NOP_MAX_TAIL ("nop") or
 * fail_status above U8_MAX ("fail").
 */
TERN_VISIBLE_IF_KUNIT int tern_dbg_nop_in(const struct tern_dbg *dbg, u32 flag,
					  struct tern_cmd_nop_in *nop, size_t *tail)
{
	u32 delay = 0, syndrome = 0, len = 0, status = 0;

	switch (flag) {
	case 0:
		delay = READ_ONCE(dbg->nop_delay_us);
		len = READ_ONCE(dbg->nop_len);
		if (len > TERN_DBG_NOP_MAX_TAIL)
			return -EINVAL;
		if (delay)
			flag = TERN_NOP_F_DELAY;
		break;
	case TERN_NOP_F_FAIL:
		status = READ_ONCE(dbg->fail_status);
		syndrome = READ_ONCE(dbg->fail_syndrome);
		if (status > U8_MAX)
			return -EINVAL;
		break;
	case TERN_NOP_F_DROP:
	case TERN_NOP_F_FATAL:
		break;
	default:
		return -EINVAL;
	}

	memset(nop, 0, sizeof(*nop));
	nop->flags = cpu_to_le32(flag);
	nop->delay_us = cpu_to_le32(delay);
	nop->fail_status = status;
	nop->fail_syndrome = cpu_to_le32(syndrome);
	*tail = len;
	return 0;
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dbg_nop_in);

static int tern_dbg_run_nop(struct tern_dev *tdev, u32 flag)
{
	struct tern_cmd_nop_in nop;
	u8 *in, *out = NULL;
	size_t in_len, tail, i;
	int err;

	err = tern_dbg_nop_in(&tdev->dbg, flag, &nop, &tail);
	if (err)
		return err;
	in_len = sizeof(nop) + tail;
	in = kzalloc(in_len, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	if (tail) {
		out = kzalloc(tail, GFP_KERNEL);
		if (!out) {
			kfree(in);
			return -ENOMEM;
		}
	}
	memcpy(in, &nop, sizeof(nop));
	for (i = 0; i < tail; i++)
		in[sizeof(nop) + i] = (u8)(i * 7 + 1);

	err = tern_cmd_exec(tdev, TERN_CMD_NOP, in, in_len, out, tail, NULL);
	if (!err && tail && memcmp(out, in + sizeof(nop), tail)) {
		dev_err(&tdev->pdev->dev, "NOP echo of %zu bytes came back different\n", tail);
		err = -EIO;
	}
	kfree(out);
	kfree(in);
	return err;
}

/* The cmd_test/ triggers: writing 1 runs that NOP; the write fails with its errno. */
static int tern_dbg_trigger(void *data, u64 val, u32 flag)
{
	if (val != 1)
		return -EINVAL;
	return tern_dbg_run_nop(data, flag);
}

static int tern_dbg_nop_set(void *data, u64 val)
{
	return tern_dbg_trigger(data, val, 0);
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_nop_fops, NULL, tern_dbg_nop_set, "%llu\n");

static int tern_dbg_fail_set(void *data, u64 val)
{
	return tern_dbg_trigger(data, val, TERN_NOP_F_FAIL);
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_fail_fops, NULL, tern_dbg_fail_set, "%llu\n");

static int tern_dbg_drop_set(void *data, u64 val)
{
	return tern_dbg_trigger(data, val, TERN_NOP_F_DROP);
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_drop_fops, NULL, tern_dbg_drop_set, "%llu\n");

static int tern_dbg_fatal_set(void *data, u64 val)
{
	return tern_dbg_trigger(data, val, TERN_NOP_F_FATAL);
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_fatal_fops, NULL, tern_dbg_fatal_set, "%llu\n");

static void tern_dbg_cmd_test_init(struct tern_dev *tdev)
{
	struct dentry *dir = debugfs_create_dir("cmd_test", tdev->debugfs);
	struct tern_dbg *dbg = &tdev->dbg;

	debugfs_create_file_unsafe("nop", 0200, dir, tdev, &tern_dbg_nop_fops);
	debugfs_create_u32("nop_delay_us", 0600, dir, &dbg->nop_delay_us);
	debugfs_create_u32("nop_len", 0600, dir, &dbg->nop_len);
	debugfs_create_file_unsafe("fail", 0200, dir, tdev, &tern_dbg_fail_fops);
	debugfs_create_u32("fail_status", 0600, dir, &dbg->fail_status);
	debugfs_create_x32("fail_syndrome", 0600, dir, &dbg->fail_syndrome);
	debugfs_create_file_unsafe("drop", 0200, dir, tdev, &tern_dbg_drop_fops);
	debugfs_create_file_unsafe("fatal", 0200, dir, tdev, &tern_dbg_fatal_fops);
}

/**
 * tern_dbg_wf_value() - one value of QUERY_WIRE_FAULTS's output
 * @q: the output
 * @field: the value
 *
 * Return: the value (roce_only as 0 or 1), 0 for TERN_DBG_WF_NUM.
 */
TERN_VISIBLE_IF_KUNIT u64 tern_dbg_wf_value(const struct tern_cmd_query_wire_faults_out *q,
					    enum tern_dbg_wf_field field)
{
	switch (field) {
	case TERN_DBG_WF_DROP:
		return le32_to_cpu(q->cfg.drop_ppm);
	case TERN_DBG_WF_CORRUPT:
		return le32_to_cpu(q->cfg.corrupt_ppm);
	case TERN_DBG_WF_DUPLICATE:
		return le32_to_cpu(q->cfg.duplicate_ppm);
	case TERN_DBG_WF_REORDER:
		return le32_to_cpu(q->cfg.reorder_ppm);
	case TERN_DBG_WF_ROCE_ONLY:
		return !!(le32_to_cpu(q->cfg.flags) & TERN_WIRE_FAULT_F_ROCE_ONLY);
	case TERN_DBG_WF_SEED:
		return le64_to_cpu(q->cfg.seed);
	case TERN_DBG_WF_FRAMES:
		return le64_to_cpu(q->frames);
	case TERN_DBG_WF_DROPPED:
		return le64_to_cpu(q->dropped);
	case TERN_DBG_WF_CORRUPTED:
		return le64_to_cpu(q->corrupted);
	case TERN_DBG_WF_DUPLICATED:
		return le64_to_cpu(q->duplicated);
	case TERN_DBG_WF_REORDERED:
		return le64_to_cpu(q->reordered);
	default:
		return 0;
	}
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dbg_wf_value);

static int tern_dbg_wf_ppm(__le32 *ppm, u64 val)
{
	if (val > TERN_WIRE_FAULT_PPM_MAX)
		return -EINVAL;
	*ppm = cpu_to_le32(val);
	return 0;
}

/**
 * tern_dbg_wf_update() - change one value of a SET_WIRE_FAULTS input
 * @wf: the input
 * @field: the value
 * @val: what a write to its file gave
 *
 * Return: 0, or -EINVAL (@wf unchanged) for a value out of range or a read-only field.
 */
TERN_VISIBLE_IF_KUNIT int tern_dbg_wf_update(struct tern_wire_faults *wf,
					     enum tern_dbg_wf_field field, u64 val)
{
	u32 flags = le32_to_cpu(wf->flags);

	switch (field) {
	case TERN_DBG_WF_DROP:
		return tern_dbg_wf_ppm(&wf->drop_ppm, val);
	case TERN_DBG_WF_CORRUPT:
		return tern_dbg_wf_ppm(&wf->corrupt_ppm, val);
	case TERN_DBG_WF_DUPLICATE:
		return tern_dbg_wf_ppm(&wf->duplicate_ppm, val);
	case TERN_DBG_WF_REORDER:
		return tern_dbg_wf_ppm(&wf->reorder_ppm, val);
	case TERN_DBG_WF_ROCE_ONLY:
		if (val > 1)
			return -EINVAL;
		if (val)
			flags |= TERN_WIRE_FAULT_F_ROCE_ONLY;
		else
			flags &= ~TERN_WIRE_FAULT_F_ROCE_ONLY;
		wf->flags = cpu_to_le32(flags);
		return 0;
	case TERN_DBG_WF_SEED:
		wf->seed = cpu_to_le64(val);
		return 0;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dbg_wf_update);

static int tern_dbg_wf_get(void *data, u64 *val)
{
	const struct tern_dbg_wf_file *f = data;
	struct tern_cmd_query_wire_faults_out out;
	int err;

	err = tern_cmd_exec(f->tdev, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, &out, sizeof(out),
			    NULL);
	if (err)
		return err;
	*val = tern_dbg_wf_value(&out, f->field);
	return 0;
}

/* The device's setting with this file's value changed. */
static int tern_dbg_wf_set(void *data, u64 val)
{
	const struct tern_dbg_wf_file *f = data;
	struct tern_cmd_query_wire_faults_out out;
	struct tern_dev *tdev = f->tdev;
	int err;

	mutex_lock(&tern_dbg_wf_lock);
	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, &out, sizeof(out), NULL);
	if (!err)
		err = tern_dbg_wf_update(&out.cfg, f->field, val);
	if (!err)
		err = tern_cmd_exec(tdev, TERN_CMD_SET_WIRE_FAULTS, &out.cfg, sizeof(out.cfg),
				    NULL, 0, NULL);
	mutex_unlock(&tern_dbg_wf_lock);
	return err;
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_wf_fops, tern_dbg_wf_get, tern_dbg_wf_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_wf_counter_fops, tern_dbg_wf_get, NULL, "%llu\n");

static int tern_dbg_wf_off_set(void *data, u64 val)
{
	struct tern_wire_faults wf = {};
	int err;

	if (val != 1)
		return -EINVAL;
	mutex_lock(&tern_dbg_wf_lock);
	err = tern_cmd_exec(data, TERN_CMD_SET_WIRE_FAULTS, &wf, sizeof(wf), NULL, 0, NULL);
	mutex_unlock(&tern_dbg_wf_lock);
	return err;
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_wf_off_fops, NULL, tern_dbg_wf_off_set, "%llu\n");

static const char * const tern_dbg_wf_names[TERN_DBG_WF_NUM] = {
	[TERN_DBG_WF_DROP]	= "drop_ppm",
	[TERN_DBG_WF_CORRUPT]	= "corrupt_ppm",
	[TERN_DBG_WF_DUPLICATE]	= "duplicate_ppm",
	[TERN_DBG_WF_REORDER]	= "reorder_ppm",
	[TERN_DBG_WF_ROCE_ONLY]	= "roce_only",
	[TERN_DBG_WF_SEED]	= "seed",
	[TERN_DBG_WF_FRAMES]	= "frames",
	[TERN_DBG_WF_DROPPED]	= "dropped",
	[TERN_DBG_WF_CORRUPTED]	= "corrupted",
	[TERN_DBG_WF_DUPLICATED] = "duplicated",
	[TERN_DBG_WF_REORDERED]	= "reordered",
};

static void tern_dbg_wire_faults_init(struct tern_dev *tdev)
{
	struct dentry *dir = debugfs_create_dir("wire_faults", tdev->debugfs);
	unsigned int i;

	for (i = 0; i < TERN_DBG_WF_NUM; i++) {
		struct tern_dbg_wf_file *f = &tdev->dbg.wf_files[i];
		bool counter = i >= TERN_DBG_WF_FRAMES;

		f->tdev = tdev;
		f->field = i;
		debugfs_create_file_unsafe(tern_dbg_wf_names[i], counter ? 0400 : 0600, dir, f,
					   counter ? &tern_dbg_wf_counter_fops :
						     &tern_dbg_wf_fops);
	}
	debugfs_create_file_unsafe("off", 0200, dir, tdev, &tern_dbg_wf_off_fops);
}

/* The order of struct tern_cc_params; ranges as include/linux/tern/tern_dcb.h states them. */
static const struct tern_cc_field tern_dbg_cc_fields[] = {
	TERN_CC_U32("np_min_time_between_cnps", min_time_between_cnps, 0, 4095),
	TERN_CC_U32("rp_time_reset", rpg_time_reset, 1, 131071),
	TERN_CC_U32("rp_byte_reset", rpg_byte_reset, 0, 1u << 30),
	TERN_CC_U32("rp_threshold", rpg_threshold, 1, 31),
	TERN_CC_RATE("rp_max_rate", rpg_max_rate, 0),
	TERN_CC_RATE("rp_ai_rate", rpg_ai_rate, 1),
	TERN_CC_RATE("rp_hai_rate", rpg_hai_rate, 1),
	TERN_CC_U32("rp_gd", rpg_gd, 1, 15),
	TERN_CC_U32("rp_min_dec_fac", rpg_min_dec_fac, 1, 100),
	TERN_CC_RATE("rp_min_rate", rpg_min_rate, 1),
	TERN_CC_RATE("rp_rate_to_set_on_first_cnp", rate_to_set_on_first_cnp, 0),
	TERN_CC_U32("rp_dce_tcp_g", dce_tcp_g, 0, 1023),
	TERN_CC_U32("rp_dce_tcp_rtt", dce_tcp_rtt, 1, 131071),
	TERN_CC_U32("rp_rate_reduce_monitor_period", rate_reduce_monitor_period, 0, 131071),
	TERN_CC_U32("rp_initial_alpha_value", initial_alpha_value, 0, 1023),
	TERN_CC_U8("hpcc_max_stage", hpcc_max_stage, 1, 31),
	TERN_CC_U16("hpcc_eta", hpcc_eta, 500, 1000),
	TERN_CC_RATE("hpcc_ai_rate", hpcc_ai_rate, 1),
	TERN_CC_U32("hpcc_base_rtt", hpcc_base_rtt,
		    TERN_CC_HPCC_BASE_RTT_MIN, TERN_CC_HPCC_BASE_RTT_MAX),
	TERN_CC_U8("timely_hai_thresh", timely_hai_thresh, 1, TERN_CC_TIMELY_HAI_MAX),
	TERN_CC_U16("timely_alpha", timely_alpha, 1, 1024),
	TERN_CC_U16("timely_beta", timely_beta, 1, 1024),
	TERN_CC_RATE("timely_delta", timely_delta, 1),
	TERN_CC_U32("timely_t_low", timely_t_low, TERN_CC_TIMELY_RTT_MIN, TERN_CC_TIMELY_RTT_MAX),
	TERN_CC_U32("timely_t_high", timely_t_high, TERN_CC_TIMELY_RTT_MIN,
		    TERN_CC_TIMELY_RTT_MAX),
	TERN_CC_U32("timely_min_rtt", timely_min_rtt, TERN_CC_TIMELY_RTT_MIN,
		    TERN_CC_TIMELY_RTT_MAX),
	TERN_CC_U32("timely_seg", timely_seg, TERN_CC_TIMELY_SEG_MIN, TERN_CC_TIMELY_SEG_MAX),
	TERN_CC_RATE("timely_min_rate", timely_min_rate, 1),
};

static_assert(ARRAY_SIZE(tern_dbg_cc_fields) == TERN_DBG_CC_NUM);

static int tern_dbg_cc_get(void *data, u64 *val)
{
	const struct tern_dbg_cc_file *f = data;
	struct tern_cc_params cc;
	int err;

	err = tern_dcb_query_cc(f->tdev, &cc);
	if (err)
		return err;
	*val = tern_cc_field_get(&cc, f->field);
	return 0;
}

static int tern_dbg_cc_set(void *data, u64 val)
{
	const struct tern_dbg_cc_file *f = data;

	if (val > U32_MAX || !tern_cc_field_valid(f->tdev, f->field, val))
		return -EINVAL;
	return tern_dcb_set_cc_field(f->tdev, f->field, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(tern_dbg_cc_fops, tern_dbg_cc_get, tern_dbg_cc_set, "%llu\n");

static void tern_dbg_cc_params_init(struct tern_dev *tdev)
{
	struct dentry *dir = debugfs_create_dir("cc_params", tdev->debugfs);
	unsigned int i;

	for (i = 0; i < TERN_DBG_CC_NUM; i++) {
		struct tern_dbg_cc_file *f = &tdev->dbg.cc_files[i];

		f->tdev = tdev;
		f->field = &tern_dbg_cc_fields[i];
		debugfs_create_file_unsafe(f->field->name, 0600, dir, f, &tern_dbg_cc_fops);
	}
}

static const char *tern_dbg_tsa_name(u8 tsa)
{
	switch (tsa) {
	case TERN_DCB_TSA_STRICT:
		return "strict";
	case TERN_DCB_TSA_ETS:
		return "ets";
	default:
		return "?";
	}
}

static void tern_dbg_show_u8s(struct seq_file *s, const char *key, const u8 *v, int n)
{
	int i;

	seq_printf(s, "%s:", key);
	for (i = 0; i < n; i++)
		seq_printf(s, " %u", v[i]);
	seq_putc(s, '\n');
}

static void tern_dbg_show_dcb_cfg(struct seq_file *s, const struct tern_dcb_cfg *cfg)
{
	bool any = false;
	int i;

	seq_printf(s, "pfc_en: %#04x\n", cfg->pfc_en);
	seq_printf(s, "trust: %s\n", cfg->trust == TERN_DCB_TRUST_DSCP ? "dscp" :
		   cfg->trust == TERN_DCB_TRUST_PCP ? "pcp" : "?");
	seq_printf(s, "default_prio: %u\n", cfg->default_prio);
	tern_dbg_show_u8s(s, "prio_tc", cfg->prio_tc, TERN_NUM_PRIO);
	seq_puts(s, "tc_tsa:");
	for (i = 0; i < TERN_NUM_TC; i++)
		seq_printf(s, " %s", tern_dbg_tsa_name(cfg->tc_tsa[i]));
	seq_putc(s, '\n');
	tern_dbg_show_u8s(s, "tc_bw", cfg->tc_bw, TERN_NUM_TC);
	seq_puts(s, "dscp_prio:");
	for (i = 0; i < TERN_NUM_DSCP; i++) {
		if (cfg->dscp_prio[i] == TERN_DCB_DSCP_UNMAPPED)
			continue;
		seq_printf(s, " %d:%u", i, cfg->dscp_prio[i]);
		any = true;
	}
	seq_puts(s, any ? "\n" : " none\n");
	seq_printf(s, "pfc_storm_ms: %u\n", le32_to_cpu(cfg->pfc_storm_ms));
	seq_printf(s, "rx_buf_bytes: %u\n", le32_to_cpu(cfg->rx_buf_bytes));
	seq_printf(s, "xoff_bytes: %u\n", le32_to_cpu(cfg->xoff_bytes));
	seq_printf(s, "xon_bytes: %u\n", le32_to_cpu(cfg->xon_bytes));
}

static void tern_dbg_show_cc(struct seq_file *s, const struct tern_cc_params *cc)
{
	unsigned int i;

	seq_printf(s, "roce_rp_enable: %u\n", cc->rp_en);
	seq_printf(s, "roce_np_enable: %u\n", cc->np_en);
	seq_printf(s, "roce_hpcc_enable: %u\n", cc->hpcc_en);
	seq_printf(s, "roce_timely_enable: %u\n", cc->timely_en);
	seq_printf(s, "cnp_dscp: %u\n", cc->cnp_dscp);
	seq_printf(s, "cnp_802p_prio: %u\n", cc->cnp_prio);
	for (i = 0; i < TERN_DBG_CC_NUM; i++)
		seq_printf(s, "%s: %u\n", tern_dbg_cc_fields[i].name,
			   tern_cc_field_get(cc, &tern_dbg_cc_fields[i]));
}

/* Both queries are shown; one that fails gives an "error" line instead of its keys. */
static int tern_dbg_dcb_show(struct seq_file *s, void *unused)
{
	struct tern_dev *tdev = s->private;
	struct tern_cc_params cc;
	struct tern_dcb_cfg cfg;
	int err;

	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_DCB, NULL, 0, &cfg, sizeof(cfg), NULL);
	if (err)
		seq_printf(s, "dcb_error: %d\n", err);
	else
		tern_dbg_show_dcb_cfg(s, &cfg);
	err = tern_dcb_query_cc(tdev, &cc);
	if (err)
		seq_printf(s, "cc_error: %d\n", err);
	else
		tern_dbg_show_cc(s, &cc);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tern_dbg_dcb);

/**
 * tern_debugfs_register() - create /sys/kernel/debug/tern (module init)
 */
void tern_debugfs_register(void)
{
	tern_debugfs_root = debugfs_create_dir("tern", NULL);
}

/**
 * tern_debugfs_unregister() - remove /sys/kernel/debug/tern (module exit)
 */
void tern_debugfs_unregister(void)
{
	debugfs_remove_recursive(tern_debugfs_root);
	tern_debugfs_root = NULL;
}

/**
 * tern_debugfs_init() - create the device's debugfs directory
 * @tdev: the device; its command queue must exist
 *
 * debugfs failures are not errors for the driver: the files are simply missing.
 */
void tern_debugfs_init(struct tern_dev *tdev)
{
	tdev->debugfs = debugfs_create_dir(pci_name(tdev->pdev), tern_debugfs_root);
	debugfs_create_file("cmdq", 0400, tdev->debugfs, tdev, &tern_dbg_cmdq_fops);
	tern_dbg_cmd_test_init(tdev);
	tern_dbg_wire_faults_init(tdev);
	if (tdev->dcb.supported) {
		debugfs_create_file("dcb", 0400, tdev->debugfs, tdev, &tern_dbg_dcb_fops);
		tern_dbg_cc_params_init(tdev);
	}
}

/**
 * tern_debugfs_cleanup() - remove the device's debugfs directory
 * @tdev: the device
 *
 * Waits for readers and writers inside the files (a cmd_test/ write may wait for a
 * command timeout).
 */
void tern_debugfs_cleanup(struct tern_dev *tdev)
{
	debugfs_remove_recursive(tdev->debugfs);
	tdev->debugfs = NULL;
}

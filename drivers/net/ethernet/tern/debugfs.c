// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern debugfs: /sys/kernel/debug/tern/<pci-name>/
 *
 *   cmdq       read: command queue depth, commands in flight, counters, mode
 *   cmd_test   write: run a NOP command; the write returns the command's errno
 *                nop [delay=<us>] [len=<bytes>]   (len: bytes echoed and checked)
 *                fail <status> [<syndrome>]       (status: number or name, e.g. bad_param)
 *                drop                             (never completes: -ETIMEDOUT)
 *                fatal                            (the firmware dies: -EIO, then the
 *                                                  recovery devlink health starts)
 *              fail, drop and fatal need a device with test hooks (QEMU test-hooks=on);
 *              elsewhere the device rejects them with BAD_PARAM (-EINVAL).
 *   wire_faults  TX fault injection, for testing recovery (SET/QUERY_WIRE_FAULTS)
 *              write: [drop=<p>] [corrupt=<p>] [duplicate=<p>] [reorder=<p>] [seed=<n>]
 *                     [roce_only], or "off". <p> is a percentage with up to 4 decimals
 *                     (0..100); keys left out become 0. Bad input: -EINVAL, no change.
 *              read:  "key: value" lines: drop, corrupt, duplicate, reorder (percent),
 *                     seed, roce_only, then the counters frames, dropped, corrupted,
 *                     duplicated, reordered (since the last device reset)
 *   dcb        read: what the firmware runs, read back from it (QUERY_DCB, QUERY_CC_PARAMS),
 *              not the driver's copy: "key: value" lines, the CC parameters under their
 *              devlink param names (devices with TERN_DEV_CAP_DCB)
 */

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "tern_core.h"

#define TERN_DBG_CMD_MAX	96
#define TERN_DBG_WF_MAX		160
#define TERN_DBG_PPM_PER_PCT	10000u
#define TERN_DBG_NOP_MAX_TAIL	(TERN_CMD_MAX_IN - sizeof(struct tern_cmd_nop_in))

static struct dentry *tern_debugfs_root;

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

static const char * const tern_dbg_status_names[] = {
	[TERN_CMD_OK]		= "ok",
	[TERN_CMD_BAD_OPCODE]	= "bad_opcode",
	[TERN_CMD_BAD_LEN]	= "bad_len",
	[TERN_CMD_BAD_PARAM]	= "bad_param",
	[TERN_CMD_NO_RESOURCES]	= "no_resources",
	[TERN_CMD_BAD_RESOURCE]	= "bad_resource",
	[TERN_CMD_BAD_STATE]	= "bad_state",
	[TERN_CMD_DMA_ERROR]	= "dma_error",
	[TERN_CMD_INTERNAL]	= "internal",
};

/* The line a debugfs write carries: at most @max - 1 bytes, copied and NUL-terminated
 * (kfree() it). ERR_PTR(-EINVAL) when longer, or memdup_user_nul()'s error.
 */
static char *tern_dbg_user_line(const char __user *ubuf, size_t count, size_t max)
{
	if (count >= max)
		return ERR_PTR(-EINVAL);
	return memdup_user_nul(ubuf, count);
}

/* The settings parser of every file here: the next blank-separated word of *@line, split
 * into @key and @val at its first '=' (@val NULL for a bare key); *@line moves past it.
 * Return: false at the end of the line.
 */
static bool tern_dbg_next_kv(char **line, char **key, char **val)
{
	char *word;

	while ((word = strsep(line, " \t"))) {
		if (!*word)
			continue;
		*val = strchr(word, '=');
		if (*val)
			*(*val)++ = '\0';
		*key = word;
		return true;
	}
	return false;
}

static int tern_dbg_parse_status(const char *arg, u8 *status)
{
	unsigned int i;

	if (!kstrtou8(arg, 0, status))
		return 0;
	for (i = 0; i < ARRAY_SIZE(tern_dbg_status_names); i++) {
		if (tern_dbg_status_names[i] && !strcasecmp(arg, tern_dbg_status_names[i])) {
			*status = i;
			return 0;
		}
	}
	return -EINVAL;
}

/**
 * tern_dbg_parse() - parse a cmd_test line
 * @line: the line, trimmed (modified: split into words)
 * @nop: NOP input header, filled in on success only
 * @tail: length of the echoed tail after the header (meaningful on success only)
 *
 * Return: 0, or -EINVAL (or a kstrto*() error) for a line that is not one of the forms
 * described at the top of this file.
 */
TERN_VISIBLE_IF_KUNIT int tern_dbg_parse(char *line, struct tern_cmd_nop_in *nop, size_t *tail)
{
	u32 flags = 0, delay = 0, syndrome = 0;
	char *verb, *arg, *key, *val;
	unsigned long len;
	u8 status = 0;
	int err;

	*tail = 0;
	verb = strsep(&line, " \t");
	if (!verb || !*verb)
		return -EINVAL;

	if (!strcmp(verb, "nop")) {
		while (tern_dbg_next_kv(&line, &key, &val)) {
			if (!val)
				return -EINVAL;
			if (!strcmp(key, "delay")) {
				err = kstrtou32(val, 0, &delay);
				if (err)
					return err;
				flags |= TERN_NOP_F_DELAY;
			} else if (!strcmp(key, "len")) {
				err = kstrtoul(val, 0, &len);
				if (err)
					return err;
				if (len > TERN_DBG_NOP_MAX_TAIL)
					return -EINVAL;
				*tail = len;
			} else {
				return -EINVAL;
			}
		}
	} else if (!strcmp(verb, "fail")) {
		arg = strsep(&line, " \t");
		if (!arg || tern_dbg_parse_status(arg, &status))
			return -EINVAL;
		arg = strsep(&line, " \t");
		if (arg && *arg) {
			err = kstrtou32(arg, 0, &syndrome);
			if (err)
				return err;
		}
		if (line && *line)
			return -EINVAL;
		flags |= TERN_NOP_F_FAIL;
	} else if (!strcmp(verb, "drop")) {
		if (line && *line)
			return -EINVAL;
		flags |= TERN_NOP_F_DROP;
	} else if (!strcmp(verb, "fatal")) {
		if (line && *line)
			return -EINVAL;
		flags |= TERN_NOP_F_FATAL;
	} else {
		return -EINVAL;
	}

	memset(nop, 0, sizeof(*nop));
	nop->flags = cpu_to_le32(flags);
	nop->delay_us = cpu_to_le32(delay);
	nop->fail_status = status;
	nop->fail_syndrome = cpu_to_le32(syndrome);
	return 0;
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dbg_parse);

static int tern_dbg_run_nop(struct tern_dev *tdev, const struct tern_cmd_nop_in *nop,
			    size_t tail)
{
	size_t in_len = sizeof(*nop) + tail;
	u8 *in, *out = NULL;
	size_t i;
	int err;

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
	memcpy(in, nop, sizeof(*nop));
	for (i = 0; i < tail; i++)
		in[sizeof(*nop) + i] = (u8)(i * 7 + 1);

	err = tern_cmd_exec(tdev, TERN_CMD_NOP, in, in_len, out, tail, NULL);
	if (!err && tail && memcmp(out, in + sizeof(*nop), tail)) {
		dev_err(&tdev->pdev->dev, "NOP echo of %zu bytes came back different\n", tail);
		err = -EIO;
	}
	kfree(out);
	kfree(in);
	return err;
}

static ssize_t tern_dbg_cmd_test_write(struct file *file, const char __user *ubuf,
				       size_t count, loff_t *ppos)
{
	struct tern_dev *tdev = file->private_data;
	struct tern_cmd_nop_in nop;
	size_t tail;
	char *buf;
	int err;

	buf = tern_dbg_user_line(ubuf, count, TERN_DBG_CMD_MAX);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = tern_dbg_parse(strim(buf), &nop, &tail);
	kfree(buf);
	if (err)
		return err;
	err = tern_dbg_run_nop(tdev, &nop, tail);
	return err ? err : count;
}

static const struct file_operations tern_dbg_cmd_test_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tern_dbg_cmd_test_write,
	.llseek = no_llseek,
};

/* A percentage with up to 4 decimals, 0..100, in parts per million (TERN_WIRE_FAULT_PPM_MAX is
 * 100 %): "0.1" is 1000 ppm, "1" is 10000, "100" is 1000000.
 */
static int tern_dbg_parse_pct(const char *s, u32 *ppm)
{
	u32 whole = 0, frac = 0, scale = TERN_DBG_PPM_PER_PCT;
	unsigned int digits = 0;

	if (!isdigit(*s))
		return -EINVAL;
	while (isdigit(*s)) {
		whole = whole * 10 + (*s++ - '0');
		if (whole > 100)
			return -EINVAL;
	}
	if (*s == '.') {
		s++;
		if (!isdigit(*s))
			return -EINVAL;
		while (isdigit(*s)) {
			if (++digits > 4)
				return -EINVAL;
			scale /= 10;
			frac += (*s++ - '0') * scale;
		}
	}
	if (*s)
		return -EINVAL;
	*ppm = whole * TERN_DBG_PPM_PER_PCT + frac;
	return *ppm > TERN_WIRE_FAULT_PPM_MAX ? -EINVAL : 0;
}

/**
 * tern_dbg_parse_wire_faults() - parse a wire_faults line
 * @line: the line, trimmed (modified: split into words)
 * @wf: SET_WIRE_FAULTS input, filled in on success only
 *
 * Return: 0, or -EINVAL for a line that is not "off" or a set of distinct known keys with
 * valid values (see the top of this file).
 */
TERN_VISIBLE_IF_KUNIT int tern_dbg_parse_wire_faults(char *line, struct tern_wire_faults *wf)
{
	/* the four probabilities first, in the order of struct tern_wire_faults */
	static const char * const keys[] = {
		"drop", "corrupt", "duplicate", "reorder", "seed", "roce_only"
	};
	u32 ppm[4] = {}, flags = 0, seen = 0;
	unsigned int i, nwords = 0;
	char *word, *val;
	u64 seed = 0;

	if (!strcmp(line, "off"))
		goto out;
	while (tern_dbg_next_kv(&line, &word, &val)) {
		nwords++;
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strcmp(word, keys[i]))
				break;
		if (i == ARRAY_SIZE(keys) || (seen & BIT(i)))
			return -EINVAL;
		seen |= BIT(i);
		if (i < ARRAY_SIZE(ppm)) {
			if (!val || tern_dbg_parse_pct(val, &ppm[i]))
				return -EINVAL;
		} else if (!strcmp(word, "seed")) {
			if (!val || kstrtou64(val, 0, &seed))
				return -EINVAL;
		} else {
			if (val)
				return -EINVAL;
			flags |= TERN_WIRE_FAULT_F_ROCE_ONLY;
		}
	}
	if (!nwords)
		return -EINVAL;
out:
	memset(wf, 0, sizeof(*wf));
	wf->drop_ppm = cpu_to_le32(ppm[0]);
	wf->corrupt_ppm = cpu_to_le32(ppm[1]);
	wf->duplicate_ppm = cpu_to_le32(ppm[2]);
	wf->reorder_ppm = cpu_to_le32(ppm[3]);
	wf->flags = cpu_to_le32(flags);
	wf->seed = cpu_to_le64(seed);
	return 0;
}
EXPORT_SYMBOL_IF_TERN_KUNIT(tern_dbg_parse_wire_faults);

static ssize_t tern_dbg_wire_faults_write(struct file *file, const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	struct seq_file *sf = file->private_data;
	struct tern_dev *tdev = sf->private;
	struct tern_wire_faults wf;
	char *buf;
	int err;

	buf = tern_dbg_user_line(ubuf, count, TERN_DBG_WF_MAX);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = tern_dbg_parse_wire_faults(strim(buf), &wf);
	kfree(buf);
	if (err)
		return err;
	err = tern_cmd_exec(tdev, TERN_CMD_SET_WIRE_FAULTS, &wf, sizeof(wf), NULL, 0, NULL);
	return err ? err : count;
}

static void tern_dbg_show_pct(struct seq_file *s, const char *key, __le32 ppm)
{
	u32 v = le32_to_cpu(ppm);

	seq_printf(s, "%s: %u.%04u\n", key, v / TERN_DBG_PPM_PER_PCT, v % TERN_DBG_PPM_PER_PCT);
}

static int tern_dbg_wire_faults_show(struct seq_file *s, void *unused)
{
	struct tern_cmd_query_wire_faults_out out;
	struct tern_dev *tdev = s->private;
	int err;

	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_WIRE_FAULTS, NULL, 0, &out, sizeof(out), NULL);
	if (err)
		return err;
	tern_dbg_show_pct(s, "drop", out.cfg.drop_ppm);
	tern_dbg_show_pct(s, "corrupt", out.cfg.corrupt_ppm);
	tern_dbg_show_pct(s, "duplicate", out.cfg.duplicate_ppm);
	tern_dbg_show_pct(s, "reorder", out.cfg.reorder_ppm);
	seq_printf(s, "seed: %llu\n", le64_to_cpu(out.cfg.seed));
	seq_printf(s, "roce_only: %u\n",
		   !!(le32_to_cpu(out.cfg.flags) & TERN_WIRE_FAULT_F_ROCE_ONLY));
	seq_printf(s, "frames: %llu\n", le64_to_cpu(out.frames));
	seq_printf(s, "dropped: %llu\n", le64_to_cpu(out.dropped));
	seq_printf(s, "corrupted: %llu\n", le64_to_cpu(out.corrupted));
	seq_printf(s, "duplicated: %llu\n", le64_to_cpu(out.duplicated));
	seq_printf(s, "reordered: %llu\n", le64_to_cpu(out.reordered));
	return 0;
}

/* Also opened write-only: the seq_file then only carries the device to the write. */
static int tern_dbg_wire_faults_open(struct inode *inode, struct file *file)
{
	return single_open(file, tern_dbg_wire_faults_show, inode->i_private);
}

static const struct file_operations tern_dbg_wire_faults_fops = {
	.owner = THIS_MODULE,
	.open = tern_dbg_wire_faults_open,
	.read = seq_read,
	.write = tern_dbg_wire_faults_write,
	.llseek = seq_lseek,
	.release = single_release,
};

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
	seq_printf(s, "roce_rp_enable: %u\n", cc->rp_en);
	seq_printf(s, "roce_np_enable: %u\n", cc->np_en);
	seq_printf(s, "rpg_time_reset: %u\n", le32_to_cpu(cc->rpg_time_reset));
	seq_printf(s, "rpg_byte_reset: %u\n", le32_to_cpu(cc->rpg_byte_reset));
	seq_printf(s, "rpg_threshold: %u\n", le32_to_cpu(cc->rpg_threshold));
	seq_printf(s, "rpg_max_rate: %u\n", le32_to_cpu(cc->rpg_max_rate));
	seq_printf(s, "rpg_ai_rate: %u\n", le32_to_cpu(cc->rpg_ai_rate));
	seq_printf(s, "rpg_hai_rate: %u\n", le32_to_cpu(cc->rpg_hai_rate));
	seq_printf(s, "rpg_gd: %u\n", le32_to_cpu(cc->rpg_gd));
	seq_printf(s, "rpg_min_dec_fac: %u\n", le32_to_cpu(cc->rpg_min_dec_fac));
	seq_printf(s, "rpg_min_rate: %u\n", le32_to_cpu(cc->rpg_min_rate));
	seq_printf(s, "rate_to_set_on_first_cnp: %u\n",
		   le32_to_cpu(cc->rate_to_set_on_first_cnp));
	seq_printf(s, "dce_tcp_g: %u\n", le32_to_cpu(cc->dce_tcp_g));
	seq_printf(s, "dce_tcp_rtt: %u\n", le32_to_cpu(cc->dce_tcp_rtt));
	seq_printf(s, "rate_reduce_monitor_period: %u\n",
		   le32_to_cpu(cc->rate_reduce_monitor_period));
	seq_printf(s, "initial_alpha_value: %u\n", le32_to_cpu(cc->initial_alpha_value));
	seq_printf(s, "min_time_between_cnps: %u\n", le32_to_cpu(cc->min_time_between_cnps));
	seq_printf(s, "cnp_dscp: %u\n", cc->cnp_dscp);
	seq_printf(s, "cnp_802p_prio: %u\n", cc->cnp_prio);
	seq_printf(s, "roce_hpcc_enable: %u\n", cc->hpcc_en);
	seq_printf(s, "hpcc_max_stage: %u\n", cc->hpcc_max_stage);
	seq_printf(s, "hpcc_eta: %u\n", le16_to_cpu(cc->hpcc_eta));
	seq_printf(s, "hpcc_ai_rate: %u\n", le32_to_cpu(cc->hpcc_ai_rate));
	seq_printf(s, "hpcc_base_rtt: %u\n", le32_to_cpu(cc->hpcc_base_rtt));
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
	err = tern_cmd_exec(tdev, TERN_CMD_QUERY_CC_PARAMS, NULL, 0, &cc, sizeof(cc), NULL);
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
	debugfs_create_file("cmd_test", 0200, tdev->debugfs, tdev, &tern_dbg_cmd_test_fops);
	debugfs_create_file("wire_faults", 0600, tdev->debugfs, tdev, &tern_dbg_wire_faults_fops);
	if (tdev->dcb.supported)
		debugfs_create_file("dcb", 0400, tdev->debugfs, tdev, &tern_dbg_dcb_fops);
}

/**
 * tern_debugfs_cleanup() - remove the device's debugfs directory
 * @tdev: the device
 *
 * Waits for readers and writers inside the files (a cmd_test write may wait for a
 * command timeout).
 */
void tern_debugfs_cleanup(struct tern_dev *tdev)
{
	debugfs_remove_recursive(tdev->debugfs);
	tdev->debugfs = NULL;
}

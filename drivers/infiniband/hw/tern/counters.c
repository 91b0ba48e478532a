// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: port hardware counters and per-QP counters. The RoCE engine's counters
 * (QUERY_RDMA_STATS), under the names of struct tern_cmd_rdma_stats_out, in
 * /sys/class/infiniband/tern<N>/ports/1/hw_counters and in "rdma statistic show".
 *
 * Per-QP counters ("rdma statistic qp set ... auto", "rdma statistic qp bind"): each RDMA
 * core counter (struct rdma_counter) is one of the device's QP counter sets (counter->id is
 * the set's number), whose counters are the per-QP subset of the port's under the same
 * names (struct tern_cmd_counter_set_out). The RDMA core shows a port counter as the port's
 * own value plus those of its counters, running and freed (rdma_counter_get_hwstat_value()),
 * as it must for devices where a bound QP counts only in its set; tern's port counters
 * count every QP, so get_hw_stats hands the core the port's value less what the sets
 * counted, and sysfs and "rdma statistic show" show the port's total as before.
 */

#include "tern_ib.h"

#define TERN_IB_STAT(field) \
	[offsetof(struct tern_cmd_rdma_stats_out, field) / sizeof(__le64)] = { .name = #field }

static const struct rdma_stat_desc tern_ib_port_stats[] = {
	TERN_IB_STAT(tx_roce_packets),
	TERN_IB_STAT(tx_roce_bytes),
	TERN_IB_STAT(rx_roce_packets),
	TERN_IB_STAT(rx_roce_bytes),
	TERN_IB_STAT(rx_roce_discards),
	TERN_IB_STAT(rx_icrc_errors),
	TERN_IB_STAT(out_of_sequence),
	TERN_IB_STAT(duplicate_request),
	TERN_IB_STAT(packet_seq_err),
	TERN_IB_STAT(implied_nak_seq_err),
	TERN_IB_STAT(local_ack_timeout_err),
	TERN_IB_STAT(rnr_nak_retry_err),
	TERN_IB_STAT(out_of_buffer),
	TERN_IB_STAT(req_transport_retries_exceeded),
	TERN_IB_STAT(req_rnr_retries_exceeded),
	TERN_IB_STAT(req_remote_access_errors),
	TERN_IB_STAT(req_remote_invalid_request),
	TERN_IB_STAT(resp_remote_access_errors),
	TERN_IB_STAT(resp_local_length_error),
	TERN_IB_STAT(rx_write_requests),
	TERN_IB_STAT(rx_read_requests),
	TERN_IB_STAT(rx_send_requests),
	TERN_IB_STAT(db_misdirected),
	TERN_IB_STAT(cq_overflows),
	TERN_IB_STAT(retrans_pkts),
	TERN_IB_STAT(retrans_bytes),
	TERN_IB_STAT(seq_err_naks_sent),
	TERN_IB_STAT(rnr_naks_sent),
	TERN_IB_STAT(duplicate_response),
	TERN_IB_STAT(rx_pkey_mismatch),
	TERN_IB_STAT(rx_opcode_seq_err),
	TERN_IB_STAT(rx_atomic_requests),
	TERN_IB_STAT(atomic_replays),
	TERN_IB_STAT(rx_qkey_mismatch),
	TERN_IB_STAT(tx_ud_packets),
	TERN_IB_STAT(rx_ud_packets),
	TERN_IB_STAT(srq_limit_events),
	/* congestion control (tern_dcb.h, Documentation/admin/tern_ib.rst) */
	TERN_IB_STAT(np_ecn_marked_roce_packets),
	TERN_IB_STAT(np_cnp_sent),
	TERN_IB_STAT(rp_cnp_handled),
	TERN_IB_STAT(rp_cnp_ignored),
	TERN_IB_STAT(rp_rate_decrease_events),
	TERN_IB_STAT(rp_rate_increase_events),
	TERN_IB_STAT(rp_min_rate_events),
	TERN_IB_STAT(rp_limited_qps),
	/* selective repeat (Documentation/hw/rdma.rst) */
	TERN_IB_STAT(out_of_order_accepted),
	TERN_IB_STAT(selective_retrans_pkts),
	TERN_IB_STAT(tail_loss_probes),
	/* HPCC (Documentation/hw/congestion.rst) */
	TERN_IB_STAT(hpcc_int_echo_acks),
	TERN_IB_STAT(hpcc_window_updates),
	TERN_IB_STAT(hpcc_int_echoes_sent),
	TERN_IB_STAT(rx_int_discards),
	/* doorbell records (Documentation/hw/rdma.rst) */
	TERN_IB_STAT(db_rec_errors),
	/* adaptive retransmit timer (Documentation/hw/rdma.rst) */
	TERN_IB_STAT(adaptive_retrans),
	/* TIMELY (Documentation/hw/congestion.rst) */
	TERN_IB_STAT(timely_rtt_samples),
	TERN_IB_STAT(timely_rate_decreases),
	TERN_IB_STAT(timely_rate_increases),
};

/* Every counter is named, in the order of the structure. */
static_assert(ARRAY_SIZE(tern_ib_port_stats) ==
	      sizeof(struct tern_cmd_rdma_stats_out) / sizeof(__le64));

/**
 * tern_ib_alloc_hw_port_stats() - the counter set of port 1
 * @ibdev: the device
 * @port_num: the port (1)
 *
 * Return: the counters' storage, or NULL.
 */
struct rdma_hw_stats *tern_ib_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num)
{
	return rdma_alloc_hw_stats_struct(tern_ib_port_stats, ARRAY_SIZE(tern_ib_port_stats),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* Port counter index of each counter of a QP counter set, in the order of the set. */
#define TERN_IB_SET_IDX(field) \
	(offsetof(struct tern_cmd_counter_set_out, field) / sizeof(__le64))
#define TERN_IB_PORT_IDX(field) \
	(offsetof(struct tern_cmd_rdma_stats_out, field) / sizeof(__le64))

static const u8 tern_ib_qstat_idx[] = {
	[TERN_IB_SET_IDX(tx_roce_packets)] = TERN_IB_PORT_IDX(tx_roce_packets),
	[TERN_IB_SET_IDX(tx_roce_bytes)] = TERN_IB_PORT_IDX(tx_roce_bytes),
	[TERN_IB_SET_IDX(rx_roce_packets)] = TERN_IB_PORT_IDX(rx_roce_packets),
	[TERN_IB_SET_IDX(rx_roce_bytes)] = TERN_IB_PORT_IDX(rx_roce_bytes),
	[TERN_IB_SET_IDX(out_of_sequence)] = TERN_IB_PORT_IDX(out_of_sequence),
	[TERN_IB_SET_IDX(duplicate_request)] = TERN_IB_PORT_IDX(duplicate_request),
	[TERN_IB_SET_IDX(packet_seq_err)] = TERN_IB_PORT_IDX(packet_seq_err),
	[TERN_IB_SET_IDX(implied_nak_seq_err)] = TERN_IB_PORT_IDX(implied_nak_seq_err),
	[TERN_IB_SET_IDX(local_ack_timeout_err)] = TERN_IB_PORT_IDX(local_ack_timeout_err),
	[TERN_IB_SET_IDX(rnr_nak_retry_err)] = TERN_IB_PORT_IDX(rnr_nak_retry_err),
	[TERN_IB_SET_IDX(out_of_buffer)] = TERN_IB_PORT_IDX(out_of_buffer),
	[TERN_IB_SET_IDX(req_transport_retries_exceeded)] =
		TERN_IB_PORT_IDX(req_transport_retries_exceeded),
	[TERN_IB_SET_IDX(req_rnr_retries_exceeded)] = TERN_IB_PORT_IDX(req_rnr_retries_exceeded),
	[TERN_IB_SET_IDX(req_remote_access_errors)] = TERN_IB_PORT_IDX(req_remote_access_errors),
	[TERN_IB_SET_IDX(req_remote_invalid_request)] =
		TERN_IB_PORT_IDX(req_remote_invalid_request),
	[TERN_IB_SET_IDX(resp_remote_access_errors)] = TERN_IB_PORT_IDX(resp_remote_access_errors),
	[TERN_IB_SET_IDX(resp_local_length_error)] = TERN_IB_PORT_IDX(resp_local_length_error),
	[TERN_IB_SET_IDX(retrans_pkts)] = TERN_IB_PORT_IDX(retrans_pkts),
	[TERN_IB_SET_IDX(retrans_bytes)] = TERN_IB_PORT_IDX(retrans_bytes),
	[TERN_IB_SET_IDX(seq_err_naks_sent)] = TERN_IB_PORT_IDX(seq_err_naks_sent),
	[TERN_IB_SET_IDX(rnr_naks_sent)] = TERN_IB_PORT_IDX(rnr_naks_sent),
	[TERN_IB_SET_IDX(np_ecn_marked_roce_packets)] =
		TERN_IB_PORT_IDX(np_ecn_marked_roce_packets),
	[TERN_IB_SET_IDX(np_cnp_sent)] = TERN_IB_PORT_IDX(np_cnp_sent),
	[TERN_IB_SET_IDX(rp_cnp_handled)] = TERN_IB_PORT_IDX(rp_cnp_handled),
};

/* Every counter of a set is mapped, and to a port counter. */
static_assert(ARRAY_SIZE(tern_ib_qstat_idx) == TERN_IB_NUM_QP_STATS);
static_assert(ARRAY_SIZE(tern_ib_port_stats) <= 256);

/* QUERY_COUNTER of @set into dev->ctr_buf. Called with ctr_lock held. */
static int tern_ib_ctr_query_locked(struct tern_ib_dev *dev, u32 set)
{
	struct tern_cmd_counter_in in = { .set = cpu_to_le32(set) };

	lockdep_assert_held(&dev->ctr_lock);
	return tern_ib_cmd(dev, TERN_CMD_QUERY_COUNTER, &in, sizeof(in), &dev->ctr_buf,
			   sizeof(dev->ctr_buf), NULL);
}

/*
 * What the counter sets counted, freed ones included, into @sum (per set counter). Called
 * with ctr_lock held.
 */
static int tern_ib_ctr_sum_locked(struct tern_ib_dev *dev, u64 *sum)
{
	const __le64 *v = (const __le64 *)&dev->ctr_buf;
	unsigned long set;
	int err, i;

	memcpy(sum, dev->ctr_gone, sizeof(dev->ctr_gone));
	for_each_set_bit(set, dev->ctr_live, TERN_IB_MAX_CTR_SETS + 1) {
		err = tern_ib_ctr_query_locked(dev, set);
		if (err)
			return err;
		for (i = 0; i < TERN_IB_NUM_QP_STATS; i++)
			sum[i] += le64_to_cpu(v[i]);
	}
	return 0;
}

/**
 * tern_ib_get_hw_stats() - read the counters from the device
 * @ibdev: the device
 * @stats: filled in
 * @port: the port
 * @index: unused: every counter is read at once
 *
 * The per-QP counters hold the port's value less what the counter sets counted (see the
 * top of this file). The sets are read before the port, so a packet counted in between
 * makes the port's value larger, never the difference negative. Sleeps (firmware commands).
 *
 * Return: the number of counters, or a negative errno.
 */
int tern_ib_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port,
			 int index)
{
	struct tern_ib_dev *dev = to_tibdev(ibdev);
	struct tern_cmd_rdma_stats_out out = {};	/* an older device answers less: 0 */
	const __le64 *v = (const __le64 *)&out;
	u64 sets[TERN_IB_NUM_QP_STATS];
	int err, i, n;

	mutex_lock(&dev->ctr_lock);
	err = tern_ib_ctr_sum_locked(dev, sets);
	if (!err)
		err = tern_ib_cmd(dev, TERN_CMD_QUERY_RDMA_STATS, NULL, 0, &out, sizeof(out),
				  NULL);
	mutex_unlock(&dev->ctr_lock);
	if (err)
		return err;
	n = min_t(int, ARRAY_SIZE(tern_ib_port_stats), stats->num_counters);
	for (i = 0; i < n; i++)
		stats->value[i] = le64_to_cpu(v[i]);
	for (i = 0; i < TERN_IB_NUM_QP_STATS; i++) {
		u8 p = tern_ib_qstat_idx[i];

		if (p < n)
			stats->value[p] -= min(sets[i], stats->value[p]);
	}
	return n;
}

/* ALLOC_COUNTER: a new set, *@set. */
static int tern_ib_ctr_alloc(struct tern_ib_dev *dev, u32 *set)
{
	struct tern_cmd_counter_in in;
	int err;

	mutex_lock(&dev->ctr_lock);
	err = tern_ib_cmd(dev, TERN_CMD_ALLOC_COUNTER, NULL, 0, NULL, 0, set);
	if (err)
		goto out;
	if (*set && *set <= TERN_IB_MAX_CTR_SETS) {
		set_bit(*set, dev->ctr_live);
		goto out;
	}
	/* a number the driver cannot track: give it back */
	in.set = cpu_to_le32(*set);
	tern_ib_cmd(dev, TERN_CMD_FREE_COUNTER, &in, sizeof(in), NULL, 0, NULL);
	err = -ENOSPC;
out:
	mutex_unlock(&dev->ctr_lock);
	return err;
}

/*
 * FREE_COUNTER of @set, whose QPs are all unbound: what it counted moves to ctr_gone, as
 * the RDMA core moves it to the port's history.
 */
static int tern_ib_ctr_free(struct tern_ib_dev *dev, u32 set)
{
	const __le64 *v = (const __le64 *)&dev->ctr_buf;
	struct tern_cmd_counter_in in = { .set = cpu_to_le32(set) };
	int err, i;

	if (!set || set > TERN_IB_MAX_CTR_SETS)
		return -EINVAL;
	mutex_lock(&dev->ctr_lock);
	err = tern_ib_ctr_query_locked(dev, set);
	if (err)
		goto out;
	err = tern_ib_cmd(dev, TERN_CMD_FREE_COUNTER, &in, sizeof(in), NULL, 0, NULL);
	if (err)
		goto out;
	for (i = 0; i < TERN_IB_NUM_QP_STATS; i++)
		dev->ctr_gone[i] += le64_to_cpu(v[i]);
	clear_bit(set, dev->ctr_live);
out:
	mutex_unlock(&dev->ctr_lock);
	return err;
}

static int tern_ib_ctr_bind(struct tern_ib_dev *dev, u32 qpn, u32 set)
{
	struct tern_cmd_bind_qp_counter_in in = {
		.qpn = cpu_to_le32(qpn),
		.set = cpu_to_le32(set),
	};

	return tern_ib_cmd(dev, TERN_CMD_BIND_QP_COUNTER, &in, sizeof(in), NULL, 0, NULL);
}

/**
 * tern_ib_counter_bind_qp() - bind a QP to a counter
 * @counter: the counter; without a set yet (id 0), one is allocated
 * @ibqp: the QP
 *
 * Called by the RDMA core with counter->lock held. Sets ibqp->counter, which the RDMA core
 * reads to list a counter's QPs and to unbind the QP when it is destroyed.
 *
 * Return: 0, or a negative errno (a set allocated here is freed again).
 */
static int tern_ib_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct tern_ib_dev *dev = to_tibdev(counter->device);
	bool new = !counter->id;
	u32 set = counter->id;
	int err;

	if (new) {
		err = tern_ib_ctr_alloc(dev, &set);
		if (err)
			return err;
	}
	err = tern_ib_ctr_bind(dev, to_tqp(ibqp)->qpn, set);
	if (err) {
		if (new)
			tern_ib_ctr_free(dev, set);
		return err;
	}
	counter->id = set;
	ibqp->counter = counter;	/* the RDMA core finds the QP's counter here */
	return 0;
}

/**
 * tern_ib_counter_unbind_qp() - take a QP off its counter
 * @ibqp: the QP; from now on it counts only in the port's counters, and ibqp->counter is
 *	NULL (left as it was if the device refused: the QP is still bound)
 *
 * Return: 0, or a negative errno.
 */
static int tern_ib_counter_unbind_qp(struct ib_qp *ibqp)
{
	int err;

	err = tern_ib_ctr_bind(to_tibdev(ibqp->device), to_tqp(ibqp)->qpn, 0);
	if (!err)
		ibqp->counter = NULL;
	return err;
}

/**
 * tern_ib_counter_dealloc() - free a counter's set
 * @counter: the counter, no QP bound to it any more
 *
 * Return: 0, or a negative errno.
 */
static int tern_ib_counter_dealloc(struct rdma_counter *counter)
{
	if (!counter->id)
		return 0;
	return tern_ib_ctr_free(to_tibdev(counter->device), counter->id);
}

/**
 * tern_ib_counter_alloc_stats() - the storage of a counter's values
 * @counter: the counter
 *
 * Indexed as the port's counters (the RDMA core adds them up by index); the port counters
 * a set does not have are disabled, so that "rdma statistic qp show" lists only the
 * counters the set has.
 *
 * Return: the storage, or NULL.
 */
static struct rdma_hw_stats *tern_ib_counter_alloc_stats(struct rdma_counter *counter)
{
	struct rdma_hw_stats *stats;
	int i;

	stats = rdma_alloc_hw_stats_struct(tern_ib_port_stats, ARRAY_SIZE(tern_ib_port_stats),
					   RDMA_HW_STATS_DEFAULT_LIFESPAN);
	if (!stats)
		return NULL;
	bitmap_fill(stats->is_disabled, stats->num_counters);
	for (i = 0; i < TERN_IB_NUM_QP_STATS; i++)
		clear_bit(tern_ib_qstat_idx[i], stats->is_disabled);
	return stats;
}

/**
 * tern_ib_counter_update_stats() - read a counter's set from the device
 * @counter: the counter (counter->lock held by the RDMA core)
 *
 * Sleeps (a firmware command).
 *
 * Return: 0, or a negative errno.
 */
static int tern_ib_counter_update_stats(struct rdma_counter *counter)
{
	struct tern_ib_dev *dev = to_tibdev(counter->device);
	struct tern_cmd_counter_in in = { .set = cpu_to_le32(counter->id) };
	struct tern_cmd_counter_set_out out;
	const __le64 *v = (const __le64 *)&out;
	int err, i;

	if (!counter->id)
		return 0;
	err = tern_ib_cmd(dev, TERN_CMD_QUERY_COUNTER, &in, sizeof(in), &out, sizeof(out), NULL);
	if (err)
		return err;
	for (i = 0; i < TERN_IB_NUM_QP_STATS; i++)
		counter->stats->value[tern_ib_qstat_idx[i]] = le64_to_cpu(v[i]);
	return 0;
}

/* Set at probe when the device has QP counter sets (TERN_RDMA_CAP_QP_COUNTERS). */
const struct ib_device_ops tern_ib_counter_ops = {
	.counter_alloc_stats = tern_ib_counter_alloc_stats,
	.counter_bind_qp = tern_ib_counter_bind_qp,
	.counter_dealloc = tern_ib_counter_dealloc,
	.counter_unbind_qp = tern_ib_counter_unbind_qp,
	.counter_update_stats = tern_ib_counter_update_stats,
};

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tern_ib: port hardware counters. The RoCE engine's counters (QUERY_RDMA_STATS), under the
 * names of struct tern_cmd_rdma_stats_out, in /sys/class/infiniband/tern<N>/ports/1/
 * hw_counters and in "rdma statistic show".
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

/**
 * tern_ib_get_hw_stats() - read the counters from the device
 * @ibdev: the device
 * @stats: filled in
 * @port: the port
 * @index: unused: every counter is read at once
 *
 * Sleeps (a firmware command).
 *
 * Return: the number of counters, or a negative errno.
 */
int tern_ib_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port,
			 int index)
{
	struct tern_cmd_rdma_stats_out out = {};	/* an older device answers less: 0 */
	const __le64 *v = (const __le64 *)&out;
	int err, i;

	err = tern_ib_cmd(to_tibdev(ibdev), TERN_CMD_QUERY_RDMA_STATS, NULL, 0, &out,
			  sizeof(out), NULL);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(tern_ib_port_stats) && i < stats->num_counters; i++)
		stats->value[i] = le64_to_cpu(v[i]);
	return i;
}

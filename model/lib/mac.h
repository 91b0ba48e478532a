/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the MAC's hooks into the receive path (device.c, eth.c). The MAC's API
 * for the engines (classification, may_send, tx, timer, commands) is in tern_model_int.h.
 */
#ifndef TERN_MODEL_MAC_H
#define TERN_MODEL_MAC_H

#include "tern_model_int.h"

/*
 * tern_model_rx_frame(): MAC control frames (PFC) are consumed here; a frame of a lossless
 * priority the Ethernet path cannot take now is kept in the receive buffer; everything else
 * goes to ternm_eth_rx_frame(). Same return convention as tern_model_rx_frame().
 */
size_t ternm_mac_rx_frame(struct tern_model *m, const uint8_t *frame, size_t len);
/* Move buffered frames into the Ethernet RX ring while it has descriptors. */
void ternm_mac_rx_drain(struct tern_model *m);
/* Frames are waiting in the lossless receive buffer. */
bool ternm_mac_rx_pending(const struct tern_model *m);

/* eth.c: would @frame go to an Ethernet RX queue (passes every receive check)? */
bool ternm_eth_rx_wants(const struct tern_model *m, const uint8_t *frame, size_t len);

#endif /* TERN_MODEL_MAC_H */

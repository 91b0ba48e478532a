/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: the UD multicast group table (TERN_RDMA_CAP_MCAST; tern_rdma.h, "UD
 * multicast"). TERNM_MAX_MCAST_GRP groups of at most TERNM_MAX_MCAST_QP QPs each, filled by
 * ATTACH_MCAST and emptied by DETACH_MCAST and DESTROY_QP. rdma_ud.c asks it which QPs a
 * multicast packet goes to and which Ethernet address a multicast GID maps to.
 */
#include "rdma.h"

/* Whether @gid (network order) is a multicast GID: ff00::/8 or ::ffff:224.0.0.0/4. */
bool ternm_gid_is_mcast(const uint8_t *gid)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4pfx, sizeof(v4pfx)) && (gid[12] & 0xf0) == 0xe0;
}

/* The Ethernet address of multicast GID @gid (RFC 1112 for IPv4, RFC 2464 for IPv6). */
void ternm_mcast_mac(const uint8_t *gid, uint8_t *mac)
{
	if (gid[0] == 0xff) {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	}
}

/* The group of @gid in the table, or NULL. */
struct ternm_mcast_grp *ternm_mcast_find(struct tern_model *m, const uint8_t *gid)
{
	struct ternm_rdma *r = m->rdma;
	unsigned int i;

	for (i = 0; i < TERNM_MAX_MCAST_GRP; i++)
		if (r->mcast[i].nqp && !memcmp(r->mcast[i].gid, gid, 16))
			return &r->mcast[i];
	return NULL;
}

static int mcast_slot(const struct ternm_mcast_grp *g, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < g->nqp && i < TERNM_MAX_MCAST_QP; i++)
		if (g->qpn[i] == qpn)
			return (int)i;
	return -1;
}

static void mcast_remove(struct ternm_mcast_grp *g, unsigned int i)
{
	g->qpn[i] = g->qpn[g->nqp - 1];
	g->nqp--;
	if (!g->nqp)
		memset(g, 0, sizeof(*g));
}

int ternm_mcast_cmd(struct tern_model *m, bool attach, const uint8_t *in,
		    struct ternm_cmd_result *r)
{
	typedef struct tern_cmd_mcast_in T;
	struct ternm_rdma *rd = m->rdma;
	const uint8_t *gid = CFLD(in, T, gid);
	uint32_t qpn = get_le32(CFLD(in, T, qpn));
	struct ternm_mcast_grp *g;
	struct ternm_qp *qp;
	unsigned int i;
	int slot;

	if (get_le32(CFLD(in, T, rsvd)))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, rsvd));
	qp = ternm_qp_get(m, qpn);
	if (!qp)
		return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, qpn));
	if (qp->type != TERN_QPT_UD)
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, qpn));
	if (!ternm_gid_is_mcast(gid))
		return ternm_refuse(r, TERN_CMD_BAD_PARAM, offsetof(T, gid));
	g = ternm_mcast_find(m, gid);
	slot = g ? mcast_slot(g, qpn) : -1;
	if (!attach) {
		if (slot < 0)
			return ternm_refuse(r, TERN_CMD_BAD_RESOURCE, offsetof(T, gid));
		mcast_remove(g, (unsigned int)slot);
		return TERN_CMD_OK;
	}
	if (slot >= 0)
		return TERN_CMD_OK;
	if (!g) {
		for (i = 0; i < TERNM_MAX_MCAST_GRP && rd->mcast[i].nqp; i++)
			;
		if (i == TERNM_MAX_MCAST_GRP)
			return ternm_refuse(r, TERN_CMD_NO_RESOURCES, offsetof(T, gid));
		g = &rd->mcast[i];
		memcpy(g->gid, gid, 16);
	}
	if (g->nqp >= TERNM_MAX_MCAST_QP)
		return ternm_refuse(r, TERN_CMD_NO_RESOURCES, offsetof(T, qpn));
	g->qpn[g->nqp++] = qpn;
	return TERN_CMD_OK;
}

/* DESTROY_QP: @qpn leaves every group. */
void ternm_mcast_qp_gone(struct tern_model *m, uint32_t qpn)
{
	struct ternm_rdma *r = m->rdma;
	unsigned int i;
	int slot;

	for (i = 0; i < TERNM_MAX_MCAST_GRP; i++) {
		if (!r->mcast[i].nqp)
			continue;
		slot = mcast_slot(&r->mcast[i], qpn);
		if (slot >= 0)
			mcast_remove(&r->mcast[i], (unsigned int)slot);
	}
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Event queues: creation rules, events, arming, overflow, doorbell checks. */
#include "tests.h"

static void t_eq_create_rules(void)
{
	struct fake f;
	struct drv_ring eq[17], tx;
	uint8_t d4[4];
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 5));
	CHECK_EQ(drv_eq_create(&f, &eq[0], 4, 0, TERN_EQ_F_CMD, false), TERN_CMD_OK);
	CHECK_EQ(eq[0].num, 0);
	CHECK_EQ(drv_eq_create(&f, &eq[1], 12, 7, TERN_EQ_F_ASYNC, false), TERN_CMD_OK);
	CHECK_EQ(eq[1].num, 1);
	/* each flag on at most one EQ */
	CHECK_EQ(drv_eq_create(&f, &eq[2], 4, 1, TERN_EQ_F_CMD, false), TERN_CMD_BAD_STATE);
	CHECK_EQ(drv_eq_create(&f, &eq[2], 4, 1, TERN_EQ_F_ASYNC | TERN_EQ_F_CMD, false),
		 TERN_CMD_BAD_STATE);
	/* fill up: 16 EQs, then NO_RESOURCES */
	for (i = 2; i < 16; i++) {
		CHECK_EQ(drv_eq_create(&f, &eq[i], 4, i % 8, 0, i % 2), TERN_CMD_OK);
		CHECK_EQ(eq[i].num, i);
	}
	CHECK_EQ(drv_eq_create(&f, &eq[16], 4, 0, 0, false), TERN_CMD_NO_RESOURCES);
	/* lowest free number is reused */
	wr32(d4, 5);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_OK);
	wr32(d4, 3);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_BAD_RESOURCE);
	CHECK_EQ(drv_eq_create(&f, &eq[16], 4, 0, 0, false), TERN_CMD_OK);
	CHECK_EQ(eq[16].num, 3);
	/* the ASYNC flag is free again once its EQ is gone */
	wr32(d4, 1);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_OK);
	CHECK_EQ(drv_eq_create(&f, &eq[1], 4, 2, TERN_EQ_F_ASYNC, false), TERN_CMD_OK);
	CHECK_EQ(eq[1].num, 1);
	/* an EQ with an Ethernet queue attached cannot go */
	REQUIRE(drv_ethq_create(&f, &tx, false, 6, 7, false) == TERN_CMD_OK);
	wr32(d4, 7);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_BAD_STATE);
	wr32(d4, tx.num);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_ETH_TXQ, d4, 4, NULL, 0, &c), TERN_CMD_OK);
	wr32(d4, 7);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_DESTROY_EQ, d4, 4, NULL, 0, &c), TERN_CMD_OK);
	fk_fini(&f);
}

/* Command completion events, arming and MSI-X. */
static void t_eq_events_arming(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t type;
	uint32_t d0;
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &eq, 4, 3, TERN_EQ_F_CMD, false) == TERN_CMD_OK);
	/* the CREATE_EQ completion itself is reported on the new EQ; not armed: no MSI-X */
	CHECK(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(type, TERN_EQE_CMD_COMPLETION);
	CHECK_EQ(d0, 1);		/* completion ring PI after it */
	CHECK_EQ(f.msix[3], 0);
	drv_eq_arm(&f, &eq);		/* CI == PI: nothing to tell */
	CHECK_EQ(f.msix[3], 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[3], 1);
	/* disarmed by that interrupt: more events, no more interrupts */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[3], 1);
	for (i = 2; i <= 4; i++) {
		CHECK(drv_eq_poll(&f, &eq, &type, &d0));
		CHECK_EQ(type, TERN_EQE_CMD_COMPLETION);
		CHECK_EQ(d0, i);
	}
	CHECK(!drv_eq_poll(&f, &eq, NULL, NULL));
	/* arming while entries are unconsumed notifies immediately */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	db(&f, TERN_DB_EQ(eq.num), ((eq.ci) & TERN_EQ_DB_CI_MASK) | TERN_EQ_DB_ARM);
	CHECK_EQ(f.msix[3], 2);
	/* ... and that notification disarmed it */
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[3], 2);
	/* CI update without ARM does not arm */
	while (drv_eq_poll(&f, &eq, NULL, NULL))
		;
	db(&f, TERN_DB_EQ(eq.num), eq.ci);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[3], 2);
	CHECK_EQ(f.msix_bad, 0);
	fk_fini(&f);
}

/* A full EQ drops and counts; the unconsumed entries are never overwritten. */
static void t_eq_overflow(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)], type;
	uint32_t d0;
	struct cqe c;
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &eq, 4, 0, TERN_EQ_F_CMD, false) == TERN_CMD_OK);	/* event 1 */
	for (i = 0; i < 19; i++)
		CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	/* 20 events for 16 entries: 4 lost */
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, eq_overflows), 4);
	for (i = 1; i <= 16; i++) {
		CHECK(drv_eq_poll(&f, &eq, &type, &d0));
		CHECK_EQ(d0, i);
	}
	CHECK(!drv_eq_poll(&f, &eq, NULL, NULL));
	/* consume and arm: events flow again (second pass, phase 0) */
	drv_eq_arm(&f, &eq);
	CHECK_EQ(f.msix[0], 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK(drv_eq_poll(&f, &eq, &type, &d0));
	CHECK_EQ(d0, 22);
	CHECK_EQ(f.msix[0], 1);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, eq_overflows), 5);	/* the stats command's own event was the 5th */
	fk_fini(&f);
}

/* Long run over a deep EQ with page lists: phases over several passes. */
static void t_eq_wrap_page_list(void)
{
	struct fake f;
	struct drv_ring eq;
	uint8_t type;
	uint32_t d0, expect = 1;
	struct cqe c;
	unsigned int i, j;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 8));
	REQUIRE(drv_eq_create(&f, &eq, 9, 6, TERN_EQ_F_CMD, true) == TERN_CMD_OK);
	CHECK_EQ(eq.npages, 2);
	drv_eq_arm(&f, &eq);
	for (i = 0; i < 12; i++) {
		for (j = 0; j < 200; j++)
			drv_cmd_post(&f, TERN_CMD_QUERY_PORT, (uint16_t)j, NULL, 0, 0, 64, f.out_mb);
		drv_cmd_ring(&f);
		fk_run(&f);
		while (drv_cmd_poll(&f, &c))
			;
		while (drv_eq_poll(&f, &eq, &type, &d0)) {
			if (d0 != (expect & 0xffff) || type != TERN_EQE_CMD_COMPLETION) {
				t_failures++;
				printf("#   EQE %u: type %u data %u\n", expect, type, d0);
				break;
			}
			expect++;
		}
		drv_eq_arm(&f, &eq);
	}
	CHECK_EQ(expect, 1 + 1 + 12 * 200);
	CHECK_EQ(f.msix[6], 12);	/* 1 at the first arm (CREATE_EQ event pending) + 11 */
	fk_fini(&f);
}

/* Doorbells that move CI past PI are ignored; doorbells for missing EQs too. */
static void t_eq_doorbell_checks(void)
{
	struct fake f;
	struct drv_ring eq;
	struct cqe c;
	unsigned long logs;
	uint8_t st[sizeof(struct tern_cmd_eth_stats_out)];
	unsigned int i;

	fk_init(&f, false);
	REQUIRE(drv_cmdq_enable(&f, 3));
	REQUIRE(drv_eq_create(&f, &eq, 4, 4, TERN_EQ_F_CMD, false) == TERN_CMD_OK);	/* PI 1 */
	logs = f.logs;
	db(&f, TERN_DB_EQ(eq.num), 2 | TERN_EQ_DB_ARM);	/* past PI: ignored, not armed */
	CHECK(f.logs > logs);
	CHECK_EQ(f.msix[4], 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[4], 0);
	/* CI stayed 0: 14 more events fit, the 17th overflows (an ignored CI=2 would give 18) */
	for (i = 0; i < 15; i++)
		CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	REQUIRE(drv_eth_stats(&f, st));
	CHECK_EQ(STAT(st, eq_overflows), 1);
	/* CI = 0xffffff (way behind, modulo 2^24) is also "past PI" */
	logs = f.logs;
	db(&f, TERN_DB_EQ(eq.num), TERN_EQ_DB_CI_MASK | TERN_EQ_DB_ARM);
	CHECK(f.logs > logs);
	CHECK_EQ(f.msix[4], 0);
	/* a valid CI (=PI) with ARM is taken */
	db(&f, TERN_DB_EQ(eq.num), 16 | TERN_EQ_DB_ARM);
	CHECK_EQ(f.msix[4], 0);
	CHECK_EQ(drv_cmd(&f, TERN_CMD_QUERY_PORT, NULL, 0, NULL, 64, &c), TERN_CMD_OK);
	CHECK_EQ(f.msix[4], 1);
	/* doorbells for EQs that do not exist */
	logs = f.logs;
	db(&f, TERN_DB_EQ(9), 0 | TERN_EQ_DB_ARM);
	db(&f, TERN_DB_EQ(40), 0 | TERN_EQ_DB_ARM);
	CHECK(f.logs > logs);
	CHECK_EQ(f.msix_bad, 0);
	fk_fini(&f);
}

const struct test eq_tests[] = {
	{ "CREATE_EQ/DESTROY_EQ: numbering, flags once, 16 max, busy EQ", t_eq_create_rules },
	{ "EQ events, arming, one MSI-X per arm, immediate notify on arm", t_eq_events_arming },
	{ "EQ overflow drops and counts, never overwrites", t_eq_overflow },
	{ "EQ wrap-around over 4+ passes with a page-list ring", t_eq_wrap_page_list },
	{ "EQ doorbell CI past PI ignored, unknown EQ ignored", t_eq_doorbell_checks },
	{ NULL, NULL },
};

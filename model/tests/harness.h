/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host unit tests of the tern model: checks and TAP output, over the minimal host driver
 * (model/hostdrv/hostdrv.h: fake host and driver; wire.h: a wire between two devices).
 */
#ifndef TERN_TEST_HARNESS_H
#define TERN_TEST_HARNESS_H

#include "hostdrv.h"
#include "wire.h"

/* ---- checks ---------------------------------------------------------------------------- */
extern int t_failures;	/* failed checks in the current test */

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			t_failures++;                                                      \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
		}                                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                                     \
	do {                                                                               \
		unsigned long long _a = (unsigned long long)(a);                          \
		unsigned long long _b = (unsigned long long)(b);                          \
		if (_a != _b) {                                                            \
			t_failures++;                                                      \
			printf("#   %s:%d: %s == %s failed: 0x%llx (%llu) != 0x%llx (%llu)\n", \
			       __FILE__, __LINE__, #a, #b, _a, _a, _b, _b);               \
		}                                                                          \
	} while (0)

/* Stop the test when a precondition fails (the rest would only cascade). */
#define REQUIRE(cond)                                                                      \
	do {                                                                               \
		if (!(cond)) {                                                             \
			t_failures++;                                                      \
			printf("#   %s:%d: required: %s\n", __FILE__, __LINE__, #cond);        \
			return;                                                            \
		}                                                                          \
	} while (0)

#endif /* TERN_TEST_HARNESS_H */

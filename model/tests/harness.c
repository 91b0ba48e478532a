/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The failure count of the model's host unit tests. */
#include "harness.h"

int t_failures;

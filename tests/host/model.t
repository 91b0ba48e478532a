#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host unit tests of the device model library (model/lib) under ASan/UBSan: builds
# model/build/model-tests quietly (build errors go to stderr and fail the test), then runs it.
# It prints TAP itself. An argument selects tests whose name contains it.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
if ! make -s -C "$top/model" >&2; then
	printf '1..1\nnot ok 1 - the model tests build (see stderr)\n'
	exit 1
fi
# Leak checking is on by default with ASan on Linux; make it explicit, and fail on any report.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS
exec "$top/model/build/model-tests" "$@"

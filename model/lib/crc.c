/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern device model: CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320), the ICRC's CRC.
 *
 * ternm_crc32() continues a CRC the way zlib's crc32() does (the value is inverted on the way
 * in and out, so chained calls continue one CRC) and returns the same values. zlib computes it
 * with tables, a few bytes per cycle; on x86 hosts with PCLMULQDQ the bulk of a buffer is
 * folded with carry-less multiplications instead, 64 bytes per step (Gopal, Ozturk et al.,
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009,
 * the constants of its bit-reflected CRC-32 example), about six times faster, 16 bytes and
 * more at a time. What is left (fewer than 16 bytes after the folded part, or short pieces on
 * other hosts) takes a byte-wise table loop, which costs less than a call into zlib for so
 * few bytes; long buffers on other hosts go to zlib. ternm_crc32_reg() works on the register
 * itself (not inverted), for callers that arrange their data in 16-byte multiples. The choice
 * is made once per process from the CPU's feature flags; every path gives the same result for
 * every input (model/tests: the ICRC of every payload length).
 */
#include <zlib.h>

#include "tern_model_int.h"

#define CRC_BYTES_MAX	64	/* shorter pieces: the byte-wise loop */

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TERNM_CRC_CLMUL 1
#include <immintrin.h>


/*
 * The CRC register (not inverted) after @len bytes at @p, from @crc; @len >= 16 and a
 * multiple of 16. From 64 bytes on, four 128-bit lanes fold 64 bytes at a time and are then
 * folded into one; that one folds the remaining 16-byte blocks, and the 128-bit remainder is
 * reduced to 32 bits (Barrett reduction).
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul(uint32_t crc, const uint8_t *p, size_t len)
{
	/* x^(4*128+64) mod P, x^(4*128) mod P; x^(128+64), x^128; x^64; P' and P (reflected) */
	const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596ll, 0x0154442bd4ll);
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009ell, 0x01751997d0ll);
	const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124ll);
	const __m128i poly = _mm_set_epi64x(0x01f7011641ll, 0x01db710641ll);
	const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x1, x2, x3, x4, t1, t2, t3, t4;

	x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
	p += 16;
	len -= 16;
	if (len >= 48) {
		x2 = _mm_loadu_si128((const __m128i *)p);
		x3 = _mm_loadu_si128((const __m128i *)(p + 16));
		x4 = _mm_loadu_si128((const __m128i *)(p + 32));
		p += 48;
		len -= 48;
		while (len >= 64) {
			t1 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
			t2 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
			t3 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
			t4 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
			x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
			x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
			x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
			x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
			x1 = _mm_xor_si128(_mm_xor_si128(x1, t1),
					   _mm_loadu_si128((const __m128i *)p));
			x2 = _mm_xor_si128(_mm_xor_si128(x2, t2),
					   _mm_loadu_si128((const __m128i *)(p + 16)));
			x3 = _mm_xor_si128(_mm_xor_si128(x3, t3),
					   _mm_loadu_si128((const __m128i *)(p + 32)));
			x4 = _mm_xor_si128(_mm_xor_si128(x4, t4),
					   _mm_loadu_si128((const __m128i *)(p + 48)));
			p += 64;
			len -= 64;
		}
		/* four lanes into one */
		t1 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x2), t1);
		t1 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x3), t1);
		t1 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x4), t1);
	}
	while (len >= 16) {
		t1 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
		x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11),
						 _mm_loadu_si128((const __m128i *)p)), t1);
		p += 16;
		len -= 16;
	}
	/* 128 bits to 64 */
	x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
	x2 = _mm_srli_si128(x1, 4);
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	/* Barrett reduction to 32 bits */
	x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
	x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, mask32), poly, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

static bool clmul_ok(void)
{
	static int ok = -1;

	if (ok < 0) {
		__builtin_cpu_init();
		ok = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	}
	return ok;
}
#endif

/* The CRC register after @len more bytes, a byte at a time. */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	size_t i;

	if (!table[255]) {
		uint32_t k, r;
		int b;

		for (k = 0; k < 256; k++) {
			r = k;
			for (b = 0; b < 8; b++)
				r = (r & 1) ? (r >> 1) ^ 0xedb88320u : r >> 1;
			table[k] = r;
		}
	}
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The CRC register (not inverted) after @len more bytes, by the fastest path there is. */
uint32_t ternm_crc32_reg(uint32_t reg, const uint8_t *p, size_t len)
{
#ifdef TERNM_CRC_CLMUL
	if (len >= 16 && clmul_ok()) {
		size_t bulk = len & ~(size_t)15;

		reg = crc_clmul(reg, p, bulk);
		p += bulk;
		len -= bulk;
	}
#endif
	if (len < CRC_BYTES_MAX)
		return crc_bytes(reg, p, len);
	return ~(uint32_t)crc32(~reg, p, (uInt)len);
}

uint32_t ternm_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	return ~ternm_crc32_reg(~crc, p, len);
}

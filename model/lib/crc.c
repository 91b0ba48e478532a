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
 * more at a time; where the CPU has VPCLMULQDQ and AVX-512, buffers of 256 bytes and more are
 * folded 256 bytes per step in 512-bit registers, twice as fast again. What is left (fewer
 * than 16 bytes after the folded part, or short pieces on other hosts) takes a byte-wise
 * table loop, which costs less than a call into zlib for so few bytes; long buffers on other
 * hosts go to zlib. ternm_crc32_reg() works on the register itself (not inverted), for
 * callers that arrange their data in 16-byte multiples; ternm_crc32_reg_masked() takes a
 * buffer of any length whose first bytes are ORed with a mask on the way (a frame's ICRC over
 * the frame itself: the last partial block is folded with byte shuffles, nothing is copied).
 * The choice is made once per process from the CPU's feature flags; every path gives the same
 * result for every input (model/tests: the ICRC of every payload length).
 */
#include <zlib.h>

#include "tern_model_int.h"

#define CRC_BYTES_MAX	64	/* shorter pieces: the byte-wise loop */

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TERNM_CRC_CLMUL 1
#include <immintrin.h>

#define TARGET_CLMUL	__attribute__((target("pclmul,sse4.1")))

/*
 * Folding constants for a distance of D bits: x^(D+32) mod P and x^(D-32) mod P, bit-reflected
 * and shifted left by one (the paper's k1..k4 for D = 4 * 128 and 128).
 * D = 128:
 */
#define K3K4()		_mm_set_epi64x(0x00ccaa009ell, 0x01751997d0ll)
/* D = 4 * 128 = 512: */
#define K1K2()		_mm_set_epi64x(0x01c6e41596ll, 0x0154442bd4ll)

/* @x folded forward by the distance of @k, and @y added */
TARGET_CLMUL
static inline __m128i fold(__m128i x, __m128i k, __m128i y)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), y);
}

/*
 * The CRC register after the 128-bit remainder @x1 and the @len bytes at @p (a multiple of
 * 16): the blocks are folded in one at a time, and the remainder is reduced to 32 bits
 * (to 64, then Barrett reduction).
 *
 * Always inlined: compiled into crc_vclmul() it takes that function's VEX encoding. Called
 * from there as a function of its own, its SSE instructions ran with the upper halves of the
 * 512-bit registers still dirty (no VZEROUPPER on a tail call), and the CPU's SSE/AVX
 * transition made the whole 4 KiB CRC four times slower than its folding (205 ns, 53 ns when
 * inlined, on the host of bench/model.py).
 */
TARGET_CLMUL
static inline __attribute__((always_inline)) uint32_t crc_fold_end(__m128i x1, const uint8_t *p,
								 size_t len)
{
	const __m128i k3k4 = K3K4();
	const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124ll);	/* x^64 mod P */
	const __m128i poly = _mm_set_epi64x(0x01f7011641ll, 0x01db710641ll);	/* P', P */
	const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x2;

	for (; len >= 16; p += 16, len -= 16)
		x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)p));
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

/* Four consecutive 128-bit lanes folded into the last one. */
TARGET_CLMUL
static inline __m128i fold4(__m128i x1, __m128i x2, __m128i x3, __m128i x4)
{
	const __m128i k3k4 = K3K4();

	return fold(fold(fold(x1, k3k4, x2), k3k4, x3), k3k4, x4);
}

/*
 * The 128-bit remainder after @len bytes at @p (@len >= 16, a multiple of 16), @x added to
 * their first 16 (the CRC register, or the remainder of what comes before, folded forward
 * over them). From 64 bytes on, four 128-bit lanes fold 64 bytes at a time and are then
 * folded into one. Inlined, like crc_fold_end(), to take the encoding of its caller.
 */
TARGET_CLMUL
static inline __attribute__((always_inline)) __m128i crc_clmul_x128(__m128i x, const uint8_t *p,
								   size_t len)
{
	const __m128i k1k2 = K1K2(), k3k4 = K3K4();
	__m128i x1, x2, x3, x4;

	x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), x);
	p += 16;
	len -= 16;
	if (len >= 48) {
		x2 = _mm_loadu_si128((const __m128i *)p);
		x3 = _mm_loadu_si128((const __m128i *)(p + 16));
		x4 = _mm_loadu_si128((const __m128i *)(p + 32));
		for (p += 48, len -= 48; len >= 64; p += 64, len -= 64) {
			x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)p));
			x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(p + 16)));
			x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(p + 32)));
			x4 = fold(x4, k1k2, _mm_loadu_si128((const __m128i *)(p + 48)));
		}
		x1 = fold4(x1, x2, x3, x4);
	}
	for (; len >= 16; p += 16, len -= 16)
		x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)p));
	return x1;
}

/* The CRC register (not inverted) after @len bytes at @p, from @crc; @len >= 16, a multiple of 16. */
TARGET_CLMUL
static uint32_t crc_clmul(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc_fold_end(crc_clmul_x128(_mm_cvtsi32_si128((int)crc), p, len), p, 0);
}

/* Block @i (16 bytes) of the @na blocks at @a followed by those at @b. */
static inline const __m128i *pair_blk(const uint8_t *a, size_t na, const uint8_t *b, size_t i)
{
	return (const __m128i *)(i < na ? a + 16 * i : b + 16 * (i - na));
}

/*
 * The CRC register after @alen bytes at @a and @blen bytes at @b (both multiples of 16,
 * @alen >= 16), reduced once: a packet's ICRC in two pieces. As in crc_clmul(), four lanes
 * fold 64 bytes at a time when there are 64 bytes and more, then one: a short packet's CRC is
 * a chain of a few multiplications, not one per block.
 */
TARGET_CLMUL
static uint32_t crc_clmul_pair(uint32_t crc, const uint8_t *a, size_t alen, const uint8_t *b,
			       size_t blen)
{
	const __m128i k1k2 = K1K2(), k3k4 = K3K4();
	size_t na = alen / 16, n = na + blen / 16, i = 1;
	__m128i x1, x2, x3, x4;

	x1 = _mm_xor_si128(_mm_loadu_si128(pair_blk(a, na, b, 0)), _mm_cvtsi32_si128((int)crc));
	if (n >= 4) {
		x2 = _mm_loadu_si128(pair_blk(a, na, b, 1));
		x3 = _mm_loadu_si128(pair_blk(a, na, b, 2));
		x4 = _mm_loadu_si128(pair_blk(a, na, b, 3));
		for (i = 4; i + 4 <= n; i += 4) {
			x1 = fold(x1, k1k2, _mm_loadu_si128(pair_blk(a, na, b, i)));
			x2 = fold(x2, k1k2, _mm_loadu_si128(pair_blk(a, na, b, i + 1)));
			x3 = fold(x3, k1k2, _mm_loadu_si128(pair_blk(a, na, b, i + 2)));
			x4 = fold(x4, k1k2, _mm_loadu_si128(pair_blk(a, na, b, i + 3)));
		}
		x1 = fold4(x1, x2, x3, x4);
	}
	for (; i < n; i++)
		x1 = fold(x1, k3k4, _mm_loadu_si128(pair_blk(a, na, b, i)));
	return crc_fold_end(x1, b, 0);
}

#define TARGET_VCLMUL	__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

/*
 * The same with VPCLMULQDQ on 512-bit registers (AVX-512): four registers of four 128-bit
 * lanes fold 256 bytes at a time, are folded into one register, which folds 64 bytes at a
 * time, and its four lanes go on as crc_clmul_x128()'s four. @len >= 256, a multiple of 16;
 * @x is added to the first 16 bytes (the CRC register, or what comes before them folded
 * forward). Returns the 128-bit remainder.
 */
TARGET_VCLMUL
static inline __m128i crc_vclmul_x128(__m128i x, const uint8_t *p, size_t len)
{
	const __m128i k3k4 = K3K4();
	/* D = 4 * 512 (computed as the paper's constants are), and D = 512 */
	const __m512i k16 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x01322d1430ll,
								  0x011542778all));
	const __m512i k4 = _mm512_broadcast_i32x4(K1K2());
	__m512i z1, z2, z3, z4;

	z1 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_zextsi128_si512(x));
	z2 = _mm512_loadu_si512(p + 64);
	z3 = _mm512_loadu_si512(p + 128);
	z4 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	while (len >= 256) {
		z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k16, 0x00),
					       _mm512_clmulepi64_epi128(z1, k16, 0x11),
					       _mm512_loadu_si512(p), 0x96);
		z2 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z2, k16, 0x00),
					       _mm512_clmulepi64_epi128(z2, k16, 0x11),
					       _mm512_loadu_si512(p + 64), 0x96);
		z3 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z3, k16, 0x00),
					       _mm512_clmulepi64_epi128(z3, k16, 0x11),
					       _mm512_loadu_si512(p + 128), 0x96);
		z4 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z4, k16, 0x00),
					       _mm512_clmulepi64_epi128(z4, k16, 0x11),
					       _mm512_loadu_si512(p + 192), 0x96);
		p += 256;
		len -= 256;
	}
	/* four registers into one, then 64 bytes at a time */
	z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k4, 0x00),
				       _mm512_clmulepi64_epi128(z1, k4, 0x11), z2, 0x96);
	z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k4, 0x00),
				       _mm512_clmulepi64_epi128(z1, k4, 0x11), z3, 0x96);
	z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k4, 0x00),
				       _mm512_clmulepi64_epi128(z1, k4, 0x11), z4, 0x96);
	while (len >= 64) {
		z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k4, 0x00),
					       _mm512_clmulepi64_epi128(z1, k4, 0x11),
					       _mm512_loadu_si512(p), 0x96);
		p += 64;
		len -= 64;
	}
	x = fold4(_mm512_extracti32x4_epi32(z1, 0), _mm512_extracti32x4_epi32(z1, 1),
		  _mm512_extracti32x4_epi32(z1, 2), _mm512_extracti32x4_epi32(z1, 3));
	for (; len >= 16; p += 16, len -= 16)
		x = fold(x, k3k4, _mm_loadu_si128((const __m128i *)p));
	return x;
}

TARGET_VCLMUL
static uint32_t crc_vclmul_x(__m128i x, const uint8_t *p, size_t len)
{
	return crc_fold_end(crc_vclmul_x128(x, p, len), p, 0);
}

TARGET_VCLMUL
static uint32_t crc_vclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc_vclmul_x(_mm_cvtsi32_si128((int)crc), p, len);
}

/*
 * crc_clmul_pair() for a second piece of 256 bytes and more: the first piece is folded into
 * 128 bits, moved forward over the first 16 bytes of the second and added to them, which are
 * folded with VPCLMULQDQ: one reduction at the end, not one for each piece.
 */
TARGET_VCLMUL
static uint32_t crc_vclmul_pair(uint32_t crc, const uint8_t *a, size_t alen, const uint8_t *b,
				size_t blen)
{
	const __m128i k3k4 = K3K4();
	__m128i x1;

	x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)a), _mm_cvtsi32_si128((int)crc));
	for (a += 16, alen -= 16; alen >= 16; a += 16, alen -= 16)
		x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)a));
	return crc_vclmul_x(fold(x1, k3k4, _mm_setzero_si128()), b, blen);
}

/*
 * PSHUFB indexes for the last, partial block: from @r (1..15), t + r moves bytes 0..r-1 up
 * to 16-r..15 (the rest 0x80: zeros), t + 16 + r moves bytes r..15 down to 0..15-r.
 */
static const uint8_t tail_shuf[48] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/*
 * The remainder @x followed by the last @r bytes (0..15) before @end, which has 16 bytes before
 * it: @x's first r bytes are folded forward over the 16 bytes made of its other 16 - r and
 * the r new ones. No byte after @end is read, none is copied.
 */
TARGET_CLMUL
static inline __attribute__((always_inline)) __m128i fold_tail(__m128i x, const uint8_t *end,
							       size_t r)
{
	__m128i up, down, b;

	if (!r)
		return x;
	up = _mm_loadu_si128((const __m128i *)(tail_shuf + r));
	down = _mm_loadu_si128((const __m128i *)(tail_shuf + 16 + r));
	/* the last 16 bytes, of which the first 16 - r are already in @x */
	b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(end - 16)),
			  _mm_cmpgt_epi8(up, _mm_set1_epi8(-1)));
	b = _mm_or_si128(b, _mm_shuffle_epi8(x, down));
	return fold(_mm_shuffle_epi8(x, up), K3K4(), b);
}

/* The first @mlen bytes at @p (16..64, a multiple of 16) OR @mask, folded from @x. */
TARGET_CLMUL
static inline __attribute__((always_inline)) __m128i fold_masked(__m128i x, const uint8_t *p,
								 const uint8_t *mask, size_t mlen)
{
	size_t i;

	x = _mm_xor_si128(x, _mm_or_si128(_mm_loadu_si128((const __m128i *)p),
					  _mm_loadu_si128((const __m128i *)mask)));
	for (i = 16; i < mlen; i += 16)
		x = fold(x, K3K4(), _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i)),
						 _mm_loadu_si128((const __m128i *)(mask + i))));
	return x;
}

/* ternm_crc32_reg_masked() by PCLMULQDQ; the caller checked the sizes. */
TARGET_CLMUL
static uint32_t crc_clmul_masked(uint32_t reg, const uint8_t *p, size_t len, const uint8_t *mask,
				 size_t mlen)
{
	size_t n = len & ~(size_t)15;
	__m128i x = fold_masked(_mm_cvtsi32_si128((int)reg), p, mask, mlen);

	if (n > mlen)
		x = crc_clmul_x128(fold(x, K3K4(), _mm_setzero_si128()), p + mlen, n - mlen);
	return crc_fold_end(fold_tail(x, p + len, len - n), p, 0);
}

/* The same with VPCLMULQDQ for what follows the masked bytes, from 256 bytes on. */
TARGET_VCLMUL
static uint32_t crc_vclmul_masked(uint32_t reg, const uint8_t *p, size_t len, const uint8_t *mask,
				  size_t mlen)
{
	size_t n = len & ~(size_t)15;
	__m128i x = fold_masked(_mm_cvtsi32_si128((int)reg), p, mask, mlen);

	if (n >= mlen + 256)
		x = crc_vclmul_x128(fold(x, K3K4(), _mm_setzero_si128()), p + mlen, n - mlen);
	else if (n > mlen)
		x = crc_clmul_x128(fold(x, K3K4(), _mm_setzero_si128()), p + mlen, n - mlen);
	return crc_fold_end(fold_tail(x, p + len, len - n), p, 0);
}

/* 0: tables only, 1: PCLMULQDQ, 2: VPCLMULQDQ on AVX-512 too */
static int clmul_level(void)
{
	static int level = -1;

	if (level < 0) {
		__builtin_cpu_init();
		level = 0;
		if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
			level = 1;
			if (__builtin_cpu_supports("avx512f") &&
			    __builtin_cpu_supports("vpclmulqdq"))
				level = 2;
		}
	}
	return level;
}
#endif

static uint32_t crc_table[256];

/*
 * The byte-wise table, and the CPU's carry-less multiply level, are set up once before main()
 * (QEMU runs devices from several threads: nothing is initialised lazily on the data path).
 */
__attribute__((constructor)) static void crc_init(void)
{
	uint32_t k, r;
	int b;

	for (k = 0; k < 256; k++) {
		r = k;
		for (b = 0; b < 8; b++)
			r = (r & 1) ? (r >> 1) ^ 0xedb88320u : r >> 1;
		crc_table[k] = r;
	}
#ifdef TERNM_CRC_CLMUL
	clmul_level();
#endif
}

/* The CRC register after @len more bytes, a byte at a time. */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	const uint32_t *table = crc_table;
	size_t i;

	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The CRC register (not inverted) after @len more bytes, by the fastest path there is. */
uint32_t ternm_crc32_reg(uint32_t reg, const uint8_t *p, size_t len)
{
#ifdef TERNM_CRC_CLMUL
	int level = len >= 16 ? clmul_level() : 0;

	if (level) {
		size_t bulk = len & ~(size_t)15;

		reg = level > 1 && bulk >= 256 ? crc_vclmul(reg, p, bulk) : crc_clmul(reg, p, bulk);
		p += bulk;
		len -= bulk;
	}
#endif
	if (len < CRC_BYTES_MAX)
		return crc_bytes(reg, p, len);
	return ~(uint32_t)crc32(~reg, p, (uInt)len);
}

uint32_t ternm_crc32_reg2(uint32_t reg, const uint8_t *a, size_t alen, const uint8_t *b,
			  size_t blen)
{
#ifdef TERNM_CRC_CLMUL
	if (alen >= 16 && !(alen % 16) && !(blen % 16)) {
		int level = clmul_level();

		if (level > 1 && blen >= 256)
			return crc_vclmul_pair(reg, a, alen, b, blen);
		if (level && blen < 256)
			return crc_clmul_pair(reg, a, alen, b, blen);
	}
#endif
	return ternm_crc32_reg(ternm_crc32_reg(reg, a, alen), b, blen);
}

uint32_t ternm_crc32_reg_masked(uint32_t reg, const uint8_t *p, size_t len, const uint8_t *mask,
				size_t mlen)
{
	uint8_t h[64];
	size_t i;

#ifdef TERNM_CRC_CLMUL
	if (mlen >= 16 && mlen <= sizeof(h) && !(mlen % 16) && len >= mlen) {
		int level = clmul_level();

		if (level > 1)
			return crc_vclmul_masked(reg, p, len, mask, mlen);
		if (level)
			return crc_clmul_masked(reg, p, len, mask, mlen);
	}
#endif
	if (mlen > len)
		mlen = len;
	if (mlen > sizeof(h))
		mlen = sizeof(h);
	for (i = 0; i < mlen; i++)
		h[i] = p[i] | mask[i];
	return ternm_crc32_reg(ternm_crc32_reg(reg, h, mlen), p + mlen, len - mlen);
}

uint32_t ternm_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	return ~ternm_crc32_reg(~crc, p, len);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * demo_crc - a small "crypto/crc" module used as a perftui test fixture.
 *
 * Several .text functions of clearly different sizes (bitwise CRC,
 * table-driven CRC, slice-by-4 CRC, a fold and an update wrapper) plus
 * module init/exit.  It is never loaded; it only has to build.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/types.h>
#include <linux/compiler.h>

#include "demo_crc.h"

#define DEMO_CRC32_POLY_LE	0xedb88320

/* .rodata */
static const u8 demo_crc_test_vector[] = "123456789";

/* .data (read through READ_ONCE so they stay real variables) */
static u32 demo_crc_seed = ~0u;
static u32 demo_crc_check_value = 0xcbf43926;
static int demo_crc_selftest_result = -1;	/* -1: not run yet */

/* .bss: tables are generated at init time */
static u32 demo_crc32_table[4][256];
static bool demo_crc_tables_ready;

noinline void demo_crc32_gen_tables(void)
{
	u32 i, j, crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (j = 0; j < 8; j++)
			crc = (crc >> 1) ^ ((crc & 1) ? DEMO_CRC32_POLY_LE : 0);
		demo_crc32_table[0][i] = crc;
	}
	for (i = 0; i < 256; i++) {
		crc = demo_crc32_table[0][i];
		for (j = 1; j < 4; j++) {
			crc = demo_crc32_table[0][crc & 0xff] ^ (crc >> 8);
			demo_crc32_table[j][i] = crc;
		}
	}
	WRITE_ONCE(demo_crc_tables_ready, true);
}

/* Smallest and slowest: one bit at a time. */
noinline u32 demo_crc32_le_bitwise(u32 crc, const u8 *p, size_t len)
{
	int i;

	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (DEMO_CRC32_POLY_LE & -(crc & 1));
	}
	return crc;
}
EXPORT_SYMBOL_GPL(demo_crc32_le_bitwise);

/* Classic table-driven, one byte per step. */
noinline u32 demo_crc32_le(u32 crc, const u8 *p, size_t len)
{
	const u32 *t = demo_crc32_table[0];

	while (len--)
		crc = t[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
EXPORT_SYMBOL_GPL(demo_crc32_le);

/* Largest: slice-by-4, four bytes per step. */
noinline u32 demo_crc32_le_slice4(u32 crc, const u8 *p, size_t len)
{
	const u32 (*t)[256] = demo_crc32_table;

	while (len && ((unsigned long)p & 3)) {
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 16) {
		int k;

		for (k = 0; k < 4; k++) {
			u32 w = crc ^ ((u32)p[0] | (u32)p[1] << 8 |
				       (u32)p[2] << 16 | (u32)p[3] << 24);

			crc = t[3][w & 0xff] ^ t[2][(w >> 8) & 0xff] ^
			      t[1][(w >> 16) & 0xff] ^ t[0][w >> 24];
			p += 4;
		}
		len -= 16;
	}
	while (len >= 4) {
		u32 w = crc ^ ((u32)p[0] | (u32)p[1] << 8 |
			       (u32)p[2] << 16 | (u32)p[3] << 24);

		crc = t[3][w & 0xff] ^ t[2][(w >> 8) & 0xff] ^
		      t[1][(w >> 16) & 0xff] ^ t[0][w >> 24];
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
EXPORT_SYMBOL_GPL(demo_crc32_le_slice4);

/* Fold a 64-bit partial remainder down to 32 bits (tiny). */
noinline u32 demo_crc_fold_64(u64 v)
{
	u32 lo = (u32)v, hi = (u32)(v >> 32);
	u8 b[4] = { hi & 0xff, (hi >> 8) & 0xff, (hi >> 16) & 0xff, hi >> 24 };

	return demo_crc32_le(lo, b, sizeof(b));
}
EXPORT_SYMBOL_GPL(demo_crc_fold_64);

/* Public entry point: pick an implementation by length. */
noinline u32 demo_crc_update(u32 crc, const void *data, size_t len)
{
	const u8 *p = data;

	if (unlikely(!READ_ONCE(demo_crc_tables_ready)))
		return demo_crc32_le_bitwise(crc, p, len);
	if (len < 16)
		return demo_crc32_le(crc, p, len);
	if (len >= 8 && ((unsigned long)p & 7) == 0) {
		u64 head = (u64)p[0] | (u64)p[1] << 8 | (u64)p[2] << 16 |
			   (u64)p[3] << 24 | (u64)p[4] << 32 | (u64)p[5] << 40 |
			   (u64)p[6] << 48 | (u64)p[7] << 56;

		crc = demo_crc_fold_64(head ^ crc);
		p += 8;
		len -= 8;
	}
	return demo_crc32_le_slice4(crc, p, len);
}
EXPORT_SYMBOL_GPL(demo_crc_update);

static int __init demo_crc_init(void)
{
	u32 a, b;

	demo_crc32_gen_tables();
	a = ~demo_crc32_le_bitwise(READ_ONCE(demo_crc_seed),
				   demo_crc_test_vector, 9);
	b = ~demo_crc_update(READ_ONCE(demo_crc_seed), demo_crc_test_vector, 9);
	WRITE_ONCE(demo_crc_selftest_result,
		   a == READ_ONCE(demo_crc_check_value) && b == a);
	pr_info("demo_crc: perftui demo crc selftest %s (%08x %08x)\n",
		demo_crc_selftest_result ? "ok" : "FAILED", a, b);
	return 0;
}

static void __exit demo_crc_exit(void)
{
	pr_info("demo_crc: perftui demo crc unloaded (selftest %d)\n",
		READ_ONCE(demo_crc_selftest_result));
}

module_init(demo_crc_init);
module_exit(demo_crc_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("perftui");
MODULE_DESCRIPTION("perftui test fixture: table-driven CRC32 helpers (never loaded)");

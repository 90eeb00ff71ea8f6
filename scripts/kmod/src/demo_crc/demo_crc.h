/* SPDX-License-Identifier: GPL-2.0 */
#ifndef DEMO_CRC_H
#define DEMO_CRC_H

#include <linux/types.h>

void demo_crc32_gen_tables(void);
u32 demo_crc32_le_bitwise(u32 crc, const u8 *p, size_t len);
u32 demo_crc32_le(u32 crc, const u8 *p, size_t len);
u32 demo_crc32_le_slice4(u32 crc, const u8 *p, size_t len);
u32 demo_crc_fold_64(u64 v);
u32 demo_crc_update(u32 crc, const void *data, size_t len);

#endif

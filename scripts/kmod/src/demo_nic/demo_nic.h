/* SPDX-License-Identifier: GPL-2.0 */
#ifndef DEMO_NIC_H
#define DEMO_NIC_H

#include <linux/types.h>

struct demo_nic_desc;

u32 demo_nic_csum_partial(const void *buf, int len, u32 sum);
u16 demo_nic_csum_fold(u32 sum);
u16 demo_nic_csum_ipv4_hdr(const u8 *hdr, unsigned int ihl);
void demo_nic_handle_error(u32 idx, u32 status);
int demo_nic_rx_one(struct demo_nic_desc *d, u32 idx);
void demo_nic_refill_rx(u32 count);
int demo_nic_rx_poll(int budget);
int demo_nic_tx_xmit(const void *data, u32 len);
u32 demo_nic_irq_entry(u32 vector);

#endif

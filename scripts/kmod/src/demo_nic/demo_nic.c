// SPDX-License-Identifier: GPL-2.0
/*
 * demo_nic - a fake "network driver" used as a perftui test fixture.
 *
 * Nothing here touches hardware.  The module is never meant to be loaded:
 * it exists so that perftui has a real, kbuild-produced relocatable ELF
 * (.ko) with functions spread over the sections a real driver uses:
 *
 *   .text            hot RX poll loop, TX path, checksum helpers
 *   .text.unlikely   __cold error handler
 *   .noinstr.text    noinstr "interrupt entry" helper
 *   .init.text       module_init
 *   .exit.text       module_exit
 *   .rodata / .data / .bss   descriptor rings, tables and counters
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/string.h>

#include "demo_nic.h"

#define DEMO_NIC_RING_SIZE	256
#define DEMO_NIC_RING_MASK	(DEMO_NIC_RING_SIZE - 1)
#define DEMO_NIC_BUF_LEN	2048

#define DEMO_NIC_DESC_DONE	0x1
#define DEMO_NIC_DESC_EOP	0x2
#define DEMO_NIC_DESC_ERR	0x80

struct demo_nic_desc {
	u64 addr;
	u32 len;
	u32 status;
};

struct demo_nic_stats {
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_errors;
	u64 tx_packets;
	u64 tx_bytes;
	u64 tx_dropped;
	u64 irqs;
};

/* .rodata */
static const char demo_nic_ifname[] = "demo_nic0";
static const u16 demo_nic_csum_seed[16] = {
	0x1d0f, 0x2f1e, 0x3e2d, 0x4c3c, 0x5b4b, 0x6a5a, 0x7969, 0x8878,
	0x9787, 0xa696, 0xb5a5, 0xc4b4, 0xd3c3, 0xe2d2, 0xf1e1, 0x00f0,
};
static const char * const demo_nic_err_names[4] = {
	"crc", "overrun", "length", "dma",
};

/* .data */
static u32 demo_nic_mtu = 1500;
static u32 demo_nic_rx_budget = 64;
static u32 demo_nic_irq_mask = 0xffff0001;

/* .bss */
static struct demo_nic_desc demo_nic_rx_ring[DEMO_NIC_RING_SIZE];
static struct demo_nic_desc demo_nic_tx_ring[DEMO_NIC_RING_SIZE];
static u8 demo_nic_rx_bufs[8][DEMO_NIC_BUF_LEN];
static struct demo_nic_stats demo_nic_stats;
static u32 demo_nic_rx_head, demo_nic_rx_tail, demo_nic_tx_head;
static u32 demo_nic_irq_pending;

noinline u32 demo_nic_csum_partial(const void *buf, int len, u32 sum)
{
	const u8 *p = buf;
	u64 acc = sum;

	while (len >= 2) {
		acc += (u32)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		acc += (u32)p[0] << 8;
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	return (u32)acc;
}
EXPORT_SYMBOL_GPL(demo_nic_csum_partial);

noinline u16 demo_nic_csum_fold(u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}
EXPORT_SYMBOL_GPL(demo_nic_csum_fold);

noinline u16 demo_nic_csum_ipv4_hdr(const u8 *hdr, unsigned int ihl)
{
	u32 sum = demo_nic_csum_seed[ihl & 15];

	sum = demo_nic_csum_partial(hdr, ihl * 4, sum);
	return demo_nic_csum_fold(sum);
}

void __cold noinline demo_nic_handle_error(u32 idx, u32 status)
{
	unsigned int kind = (status >> 8) & 3;

	WRITE_ONCE(demo_nic_stats.rx_errors, demo_nic_stats.rx_errors + 1);
	pr_warn_ratelimited("%s: rx desc %u error %s (status %#x)\n",
			    demo_nic_ifname, idx, demo_nic_err_names[kind],
			    status);
	demo_nic_rx_ring[idx].status = 0;
	demo_nic_rx_ring[idx].len = 0;
}

noinline int demo_nic_rx_one(struct demo_nic_desc *d, u32 idx)
{
	u32 status = READ_ONCE(d->status);
	const u8 *buf;
	u32 len;
	u16 csum;

	if (unlikely(status & DEMO_NIC_DESC_ERR)) {
		demo_nic_handle_error(idx, status);
		return -EIO;
	}
	len = READ_ONCE(d->len);
	if (len > demo_nic_mtu + 18)
		len = demo_nic_mtu + 18;
	buf = demo_nic_rx_bufs[idx & 7];
	csum = demo_nic_csum_ipv4_hdr(buf, 5);
	if (csum && (status & DEMO_NIC_DESC_EOP))
		WRITE_ONCE(d->addr, d->addr ^ csum);
	demo_nic_stats.rx_packets++;
	demo_nic_stats.rx_bytes += len;
	WRITE_ONCE(d->status, 0);
	return len;
}

noinline void demo_nic_refill_rx(u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		struct demo_nic_desc *d =
			&demo_nic_rx_ring[demo_nic_rx_tail & DEMO_NIC_RING_MASK];

		d->addr = (u64)(unsigned long)demo_nic_rx_bufs[i & 7];
		d->len = DEMO_NIC_BUF_LEN;
		WRITE_ONCE(d->status, 0);
		demo_nic_rx_tail++;
	}
}

/* The hot loop: this is where a profile of a busy NIC spends its time. */
noinline int demo_nic_rx_poll(int budget)
{
	int done = 0;
	int bytes = 0;

	while (done < budget) {
		u32 idx = demo_nic_rx_head & DEMO_NIC_RING_MASK;
		struct demo_nic_desc *d = &demo_nic_rx_ring[idx];
		int ret;

		if (!(READ_ONCE(d->status) & DEMO_NIC_DESC_DONE))
			break;
		ret = demo_nic_rx_one(d, idx);
		if (ret > 0)
			bytes += ret;
		demo_nic_rx_head++;
		done++;
	}
	if (done)
		demo_nic_refill_rx(done);
	return done ? done : -bytes;
}
EXPORT_SYMBOL_GPL(demo_nic_rx_poll);

noinline int demo_nic_tx_xmit(const void *data, u32 len)
{
	u32 idx = demo_nic_tx_head & DEMO_NIC_RING_MASK;
	struct demo_nic_desc *d = &demo_nic_tx_ring[idx];
	u32 csum;

	if (len > demo_nic_mtu || (READ_ONCE(d->status) & DEMO_NIC_DESC_DONE)) {
		demo_nic_stats.tx_dropped++;
		return -EBUSY;
	}
	csum = demo_nic_csum_partial(data, len, 0);
	d->addr = (u64)(unsigned long)data;
	d->len = len | ((u32)demo_nic_csum_fold(csum) << 16);
	WRITE_ONCE(d->status, DEMO_NIC_DESC_DONE | DEMO_NIC_DESC_EOP);
	demo_nic_tx_head++;
	demo_nic_stats.tx_packets++;
	demo_nic_stats.tx_bytes += len;
	return 0;
}
EXPORT_SYMBOL_GPL(demo_nic_tx_xmit);

/*
 * Pretend low-level interrupt entry: must not be traced or instrumented,
 * so it lives in .noinstr.text like the kernel's entry code.
 */
noinstr u32 demo_nic_irq_entry(u32 vector)
{
	u32 pending = READ_ONCE(demo_nic_irq_pending);
	u32 mask = READ_ONCE(demo_nic_irq_mask);
	u32 handled = 0;
	int bit;

	for (bit = 0; bit < 32; bit++) {
		if ((pending & mask) & (1u << bit))
			handled |= 1u << ((bit + vector) & 31);
	}
	WRITE_ONCE(demo_nic_irq_pending, pending & ~handled);
	WRITE_ONCE(demo_nic_stats.irqs, demo_nic_stats.irqs + 1);
	return handled;
}

static int __init demo_nic_init(void)
{
	static const u8 frame[64] = { 0x45, 0x00, 0x00, 0x40 };
	int i;

	memset(demo_nic_rx_ring, 0, sizeof(demo_nic_rx_ring));
	demo_nic_rx_head = demo_nic_rx_tail = 0;
	demo_nic_refill_rx(DEMO_NIC_RING_SIZE);
	for (i = 0; i < 4; i++)
		demo_nic_tx_xmit(frame, sizeof(frame));
	demo_nic_irq_entry(0);
	demo_nic_rx_poll(demo_nic_rx_budget);
	pr_info("%s: perftui demo NIC registered (mtu %u)\n",
		demo_nic_ifname, demo_nic_mtu);
	return 0;
}

static void __exit demo_nic_exit(void)
{
	pr_info("%s: perftui demo NIC removed: rx %llu tx %llu irqs %llu\n",
		demo_nic_ifname, demo_nic_stats.rx_packets,
		demo_nic_stats.tx_packets, demo_nic_stats.irqs);
}

module_init(demo_nic_init);
module_exit(demo_nic_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("perftui");
MODULE_DESCRIPTION("perftui test fixture: fake NIC driver (never loaded)");

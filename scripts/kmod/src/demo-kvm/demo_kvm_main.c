// SPDX-License-Identifier: GPL-2.0
/*
 * demo-kvm: fake VM-run module, a perftui test fixture.
 *
 * Built as demo-kvm.ko (hyphen, like kvm-amd.ko) from two objects; the
 * kernel calls the module demo_kvm.  It is never loaded.  Sections used:
 *
 *   .noinstr.text    world-switch fast path (demo_kvm_vmrun.c)
 *   .text            exit handlers and the vcpu run loop (this file)
 *   .text.unlikely   __cold emulation-failure report
 *   .init.text / .exit.text   module_init / module_exit
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/string.h>

#include "demo_kvm.h"

/* .rodata */
static const char * const demo_kvm_exit_names[DEMO_EXIT_MAX] = {
	"none", "hlt", "io", "npf", "cpuid", "shutdown",
};
static const u32 demo_kvm_cpuid_leaves[8] = {
	0x68747541, 0x69746e65, 0x444d4163, 0x00a20f10,
	0x178bfbff, 0x7ed8320b, 0x2fd3fbff, 0x00000000,
};

/* .data */
static int demo_kvm_max_exits = 256;
static u64 demo_kvm_npt_root = 0x1000;

/* .bss */
static struct demo_vcpu demo_kvm_vcpu0;
static u64 demo_kvm_npt[512];
static u32 demo_kvm_emulation_failures;

void __cold noinline demo_kvm_report_emulation_failure(struct demo_vcpu *vcpu)
{
	demo_kvm_emulation_failures++;
	pr_err_ratelimited("demo_kvm: vcpu%u emulation failure at rip %#llx "
			   "(exit %s, qual %#x)\n", vcpu->vcpu_id, vcpu->rip,
			   demo_kvm_exit_names[vcpu->exit_reason % DEMO_EXIT_MAX],
			   vcpu->exit_qual);
	vcpu->exit_reason = DEMO_EXIT_SHUTDOWN;
}

noinline int demo_svm_handle_npf(struct demo_vcpu *vcpu)
{
	u64 gfn = vcpu->cr2 >> 12;
	unsigned int idx = gfn & 511;
	u64 pte = READ_ONCE(demo_kvm_npt[idx]);

	if (!pte) {
		pte = (demo_kvm_npt_root + (gfn << 12)) | 0x67;
		WRITE_ONCE(demo_kvm_npt[idx], pte);
		return 1;
	}
	if ((pte >> 12) == gfn + (demo_kvm_npt_root >> 12))
		return 1;
	vcpu->exit_qual = (u32)gfn;
	demo_kvm_report_emulation_failure(vcpu);
	return 0;
}
EXPORT_SYMBOL_GPL(demo_svm_handle_npf);

noinline int demo_kvm_emulate_cpuid(struct demo_vcpu *vcpu)
{
	u32 leaf = (u32)vcpu->regs[0] & 7;

	vcpu->regs[0] = demo_kvm_cpuid_leaves[leaf];
	vcpu->regs[3] = demo_kvm_cpuid_leaves[(leaf + 1) & 7];
	vcpu->regs[1] = demo_kvm_cpuid_leaves[(leaf + 2) & 7];
	vcpu->regs[2] = demo_kvm_cpuid_leaves[(leaf + 3) & 7];
	vcpu->rip += 2;
	return 1;
}
EXPORT_SYMBOL_GPL(demo_kvm_emulate_cpuid);

noinline int demo_kvm_handle_exit(struct demo_vcpu *vcpu, u32 reason)
{
	if (reason >= DEMO_EXIT_MAX) {
		demo_kvm_report_emulation_failure(vcpu);
		return 0;
	}
	vcpu->stat_exits[reason]++;
	switch (reason) {
	case DEMO_EXIT_HLT:
		vcpu->rip += 1;
		return 1;
	case DEMO_EXIT_IO:
		vcpu->regs[0] &= ~0xffUL;
		vcpu->rip += 2;
		return 1;
	case DEMO_EXIT_NPF:
		return demo_svm_handle_npf(vcpu);
	case DEMO_EXIT_CPUID:
		return demo_kvm_emulate_cpuid(vcpu);
	case DEMO_EXIT_SHUTDOWN:
		return 0;
	default:
		return 1;
	}
}
EXPORT_SYMBOL_GPL(demo_kvm_handle_exit);

noinline int demo_kvm_arch_vcpu_ioctl_run(struct demo_vcpu *vcpu, int max_exits)
{
	int exits = 0;

	while (exits < max_exits) {
		u32 reason = demo_svm_vcpu_enter_exit(vcpu);

		exits++;
		if (!demo_kvm_handle_exit(vcpu, reason))
			break;
	}
	return exits;
}
EXPORT_SYMBOL_GPL(demo_kvm_arch_vcpu_ioctl_run);

static int __init demo_kvm_init(void)
{
	memset(&demo_kvm_vcpu0, 0, sizeof(demo_kvm_vcpu0));
	demo_kvm_vcpu0.regs[0] = 0x5eed;
	demo_kvm_vcpu0.rip = 0xfff0;
	pr_info("demo_kvm: perftui demo hypervisor loaded, %d exits\n",
		demo_kvm_arch_vcpu_ioctl_run(&demo_kvm_vcpu0,
					     demo_kvm_max_exits));
	return 0;
}

static void __exit demo_kvm_exit(void)
{
	pr_info("demo_kvm: unloading after %u guest insns, %u failures\n",
		demo_kvm_vcpu0.guest_insns, demo_kvm_emulation_failures);
}

module_init(demo_kvm_init);
module_exit(demo_kvm_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("perftui");
MODULE_DESCRIPTION("perftui test fixture: fake VM-run module (never loaded)");

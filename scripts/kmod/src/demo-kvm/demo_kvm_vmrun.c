// SPDX-License-Identifier: GPL-2.0
/*
 * demo-kvm: the fake "VM run" fast path (perftui test fixture).
 *
 * Like the real __svm_vcpu_run()/svm_vcpu_enter_exit(), everything in this
 * file runs with instrumentation forbidden and is placed in .noinstr.text.
 * Nothing here enters a guest: the "guest" is a loop over a register file.
 */
#include <linux/compiler.h>
#include <linux/types.h>

#include "demo_kvm.h"

/* .bss: per-"cpu" scratch the fake world switch saves host state into */
static unsigned long demo_kvm_host_save_area[DEMO_KVM_NR_GPRS];
static u64 demo_kvm_last_spec_ctrl;

noinstr void demo_kvm_guest_state_load(struct demo_vcpu *vcpu)
{
	int i;

	for (i = 0; i < DEMO_KVM_NR_GPRS; i++) {
		vcpu->host_regs[i] = READ_ONCE(demo_kvm_host_save_area[i]);
		WRITE_ONCE(demo_kvm_host_save_area[i], vcpu->regs[i]);
	}
}

noinstr void demo_kvm_guest_state_save(struct demo_vcpu *vcpu)
{
	int i;

	for (i = 0; i < DEMO_KVM_NR_GPRS; i++) {
		vcpu->regs[i] = READ_ONCE(demo_kvm_host_save_area[i]);
		WRITE_ONCE(demo_kvm_host_save_area[i], vcpu->host_regs[i]);
	}
}

/*
 * The "guest": spin over the register file until something that needs
 * an exit shows up.  A profile of a busy VM host is dominated by this.
 */
noinstr u32 __demo_svm_vcpu_run(struct demo_vcpu *vcpu, u64 spec_ctrl)
{
	unsigned long acc = vcpu->regs[0];
	u64 rip = vcpu->rip;
	u32 insns = 0;
	u32 reason = DEMO_EXIT_NONE;

	WRITE_ONCE(demo_kvm_last_spec_ctrl, spec_ctrl);
	while (insns < 4096) {
		unsigned long op = READ_ONCE(demo_kvm_host_save_area[rip & 15]);

		acc = (acc << 7 | acc >> (BITS_PER_LONG - 7)) ^ op ^ rip;
		rip += 1 + (acc & 7);
		insns++;
		if ((acc & 0xfff) == 0xf4) {
			reason = DEMO_EXIT_HLT;
			break;
		}
		if ((acc & 0x3ff) == 0x0e) {
			reason = DEMO_EXIT_NPF;
			vcpu->cr2 = rip << 12;
			break;
		}
		if ((acc & 0x7ff) == 0xa2) {
			reason = DEMO_EXIT_CPUID;
			break;
		}
	}
	if (reason == DEMO_EXIT_NONE)
		reason = DEMO_EXIT_IO;
	vcpu->regs[0] = acc;
	vcpu->rip = rip;
	vcpu->guest_insns += insns;
	return reason;
}

noinstr u32 demo_svm_vcpu_enter_exit(struct demo_vcpu *vcpu)
{
	u32 reason;

	demo_kvm_guest_state_load(vcpu);
	reason = __demo_svm_vcpu_run(vcpu, vcpu->spec_ctrl);
	demo_kvm_guest_state_save(vcpu);
	vcpu->exit_reason = reason;
	return reason;
}

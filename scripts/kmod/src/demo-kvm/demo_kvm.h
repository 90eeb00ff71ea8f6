/* SPDX-License-Identifier: GPL-2.0 */
#ifndef DEMO_KVM_H
#define DEMO_KVM_H

#include <linux/types.h>

#define DEMO_KVM_NR_GPRS	16

enum demo_kvm_exit_reason {
	DEMO_EXIT_NONE = 0,
	DEMO_EXIT_HLT,
	DEMO_EXIT_IO,
	DEMO_EXIT_NPF,
	DEMO_EXIT_CPUID,
	DEMO_EXIT_SHUTDOWN,
	DEMO_EXIT_MAX,
};

struct demo_vcpu {
	unsigned long regs[DEMO_KVM_NR_GPRS];
	unsigned long host_regs[DEMO_KVM_NR_GPRS];
	u64 rip;
	u64 cr2;
	u64 spec_ctrl;
	u64 tsc_offset;
	u32 exit_reason;
	u32 exit_qual;
	u64 stat_exits[DEMO_EXIT_MAX];
	u32 guest_insns;
	u32 vcpu_id;
};

/* demo_kvm_vmrun.c: .noinstr.text */
void demo_kvm_guest_state_load(struct demo_vcpu *vcpu);
void demo_kvm_guest_state_save(struct demo_vcpu *vcpu);
u32 __demo_svm_vcpu_run(struct demo_vcpu *vcpu, u64 spec_ctrl);
u32 demo_svm_vcpu_enter_exit(struct demo_vcpu *vcpu);

/* demo_kvm_main.c: .text / .text.unlikely */
int demo_svm_handle_npf(struct demo_vcpu *vcpu);
int demo_kvm_emulate_cpuid(struct demo_vcpu *vcpu);
int demo_kvm_handle_exit(struct demo_vcpu *vcpu, u32 reason);
int demo_kvm_arch_vcpu_ioctl_run(struct demo_vcpu *vcpu, int max_exits);
void demo_kvm_report_emulation_failure(struct demo_vcpu *vcpu);

#endif

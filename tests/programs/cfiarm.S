/*
 * cfiarm: two aarch64 functions for the unwinder's hand-made aarch64 samples
 * (tests/test_unwind_hostile.py; assembled with binutils-aarch64-linux-gnu, linked -shared).
 *   arm_mid   a frame record (x29, x30 pushed: CFA sp+16, x29 at CFA-16, x30 at CFA-8),
 *             calls arm_leaf
 *   arm_leaf  a leaf: CFA sp, the return address still in x30
 */
	.text
	.globl arm_mid, arm_leaf
	.type arm_mid, %function
arm_mid:
	.cfi_startproc
	stp x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov x29, sp
	bl arm_leaf
	ldp x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size arm_mid, .-arm_mid

	.type arm_leaf, %function
arm_leaf:
	.cfi_startproc
	nop
	nop
	ret
	.cfi_endproc
	.size arm_leaf, .-arm_leaf

/*
 * cfihostile: functions whose CFI is fine, odd or hostile, for the unwinder's hand-made
 * samples (tests/test_unwind_hostile.py).  Linked -shared -nostdlib: .eh_frame and
 * .eh_frame_hdr, nothing else (cfigarbage.S holds the undecodable FDE: ld makes no
 * .eh_frame_hdr table for a file with one).
 *   good_mid   saves rbx, calls good_leaf: a normal frame (CFA rsp+16, rbx at CFA-16)
 *   good_leaf  a leaf (CFA rsp+8)
 *   skip_loop  a CFA expression that jumps to itself forever (DW_OP_skip -3)
 *   cfa_same   CFA = rsp + 0, the return address at CFA + 0: with [rsp] == pc, nothing moves
 *   cfa_other  CFA = rsp + 0, the return address at CFA + 8: with cfa_same, a loop of two
 *              frames whose CFA never moves (pc changes, so only the frame limit ends it)
 *   deref_far  CFA = [rsp + 65536]: a read outside any copied stack
 *   plt_like   a PLT entry's CFA expression (rsp + 8, or + 16 past the push)
 */
	.text
	.globl good_mid, good_leaf, skip_loop, cfa_same, cfa_other, deref_far, plt_like

good_mid:
	.cfi_startproc
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	call good_leaf@PLT
	pop %rbx
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc

good_leaf:
	.cfi_startproc
	nop
	nop
	nop
	ret
	.cfi_endproc

skip_loop:
	.cfi_startproc
	.cfi_escape 0x0f, 0x03, 0x2f, 0xfd, 0xff
	nop
	ret
	.cfi_endproc

cfa_same:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset 16, 0
	nop
	ret
	.cfi_endproc

cfa_other:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_offset 16, 8
	nop
	ret
	.cfi_endproc

deref_far:
	.cfi_startproc
	.cfi_escape 0x0f, 0x05, 0x77, 0x80, 0x80, 0x04, 0x06
	nop
	ret
	.cfi_endproc

plt_like:
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	pushq $0
	jmp good_leaf
	.p2align 4
	.cfi_endproc

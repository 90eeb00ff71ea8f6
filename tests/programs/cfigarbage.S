/*
 * cfigarbage: a function whose FDE holds CFA opcodes that do not exist (ld then writes no
 * .eh_frame_hdr table: the FDEs are found by walking .eh_frame), beside a good one.
 */
	.text
	.globl garbage, fine

garbage:
	.cfi_startproc
	.cfi_escape 0x3f, 0xff, 0x3e, 0x00
	nop
	ret
	.cfi_endproc

fine:
	.cfi_startproc
	nop
	ret
	.cfi_endproc

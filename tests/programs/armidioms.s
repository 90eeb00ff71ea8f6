// aarch64 code as compilers write it (prologues, loads and stores in every addressing
// mode, arithmetic, logical and move immediates, bitfields, conditions, floating point,
// Advanced SIMD, atomics, barriers, system registers, pc-relative addresses, every branch
// condition), for tests/test_disasm_aarch64.py: assembled with aarch64-linux-gnu-as
// -march=armv8.5-a and linked, its objdump -d is the oracle.
	.text
	.globl f
	.type f, %function
f:
	stp x29, x30, [sp, #-48]!
	mov x29, sp
	stp x19, x20, [sp, #16]
	str x21, [sp, #32]
	mov x0, #16
	mov w1, #-1
	mov x2, #0x12340000
	movk x2, #0x5678, lsl #16
	movz w3, #0xffff
	movn x4, #0
	mov x19, x0
	add x0, x0, #1
	add x1, x2, #0x10, lsl #12
	sub sp, sp, #0x100
	subs w2, w2, #1
	cmp x0, #0x3f
	cmn w1, #1
	cmp x0, x1
	and x0, x0, #0xff
	orr w1, w1, #0x80000000
	eor x2, x2, #0x5555555555555555
	tst w0, #0x7
	ands x3, x3, #0xfffffffffffffff0
	lsl x0, x1, #3
	lsr w2, w3, #31
	asr x4, x5, #63
	ror w1, w2, #7
	ubfx x0, x1, #4, #8
	sbfx w0, w1, #0, #16
	ubfiz x2, x3, #2, #30
	bfi w4, w5, #8, #8
	bfxil x6, x7, #16, #16
	extr x0, x1, x2, #13
	add x0, x1, x2, lsl #3
	sub w0, w1, w2, asr #2
	add x0, x1, w2, sxtw
	add x0, x1, w2, uxtw #2
	ldr x0, [x1]
	ldr x0, [x1, #8]
	ldr w0, [x1, #4092]
	ldur x0, [x1, #-8]
	ldr x0, [x1, x2]
	ldr x0, [x1, x2, lsl #3]
	ldr w0, [x1, w2, sxtw #2]
	ldr w0, [x1, w2, uxtw]
	ldrb w0, [x1, #1]
	ldrsb x0, [x1, #-1]
	ldrh w0, [x1, #2]
	ldrsw x0, [x1, #4]
	ldr x0, [x1, #16]!
	ldr x0, [x1], #16
	str w0, [x1, #-4]!
	ldp x0, x1, [x2, #16]
	ldp w0, w1, [x2], #8
	ldp q0, q1, [x2, #32]
	ldr d0, [x1, #8]
	str s0, [x1, #4]
	ldr q0, [x1, #16]
	ldxr x0, [x1]
	stxr w2, x0, [x1]
	ldaxr w0, [x1]
	stlr x0, [x1]
	ldar w0, [x1]
	ldadd x0, x1, [x2]
	ldaddal w0, w1, [x2]
	cas x0, x1, [x2]
	swp w0, w1, [x2]
	prfm pldl1keep, [x0]
	prfm pstl1strm, [x0, #64]
	csel x0, x1, x2, ne
	csinc w0, w1, w2, eq
	cset w0, eq
	cset x0, lt
	csetm x0, hi
	cinc x0, x1, cc
	cneg w0, w1, mi
	ccmp x0, #3, #4, ne
	ccmp w0, w1, #0, ge
	ccmn x0, #1, #0, eq
	mul x0, x1, x2
	madd x0, x1, x2, x3
	msub w0, w1, w2, w3
	smull x0, w1, w2
	umulh x0, x1, x2
	sdiv x0, x1, x2
	udiv w0, w1, w2
	neg x0, x1
	mvn w0, w1
	clz x0, x1
	rbit w0, w1
	rev x0, x1
	sxtw x0, w1
	uxtb w0, w1
	sxth x0, w1
	fmov d0, #1.0
	fmov s1, #-2.5
	fmov d0, x1
	fmov x0, d1
	fmov s0, wzr
	fadd d0, d1, d2
	fmul s0, s1, s2
	fdiv d0, d1, d2
	fmadd d0, d1, d2, d3
	fsqrt d0, d1
	fcmp d0, d1
	fcmp s0, #0.0
	fcvtzs w0, d1
	fcvtzu x0, s1
	scvtf d0, x1
	ucvtf s0, w1
	fcvt s0, d1
	fcsel d0, d1, d2, gt
	fabs d0, d1
	fneg s0, s1
	fmax d0, d1, d2
	frintm d0, d1
	movi v0.4s, #0
	movi v1.2d, #0
	movi d2, #0xff00ff00ff00ff00
	movi v3.16b, #0x20
	movi v4.4s, #0x1, lsl #8
	mvni v5.4s, #0x1
	dup v0.4s, w1
	dup v1.2d, v2.d[0]
	ins v0.s[1], w1
	mov v0.16b, v1.16b
	umov w0, v1.h[3]
	mov x0, v1.d[1]
	add v0.4s, v1.4s, v2.4s
	fadd v0.2d, v1.2d, v2.2d
	fmla v0.4s, v1.4s, v2.s[1]
	addv s0, v1.4s
	uaddlv h0, v1.16b
	cnt v0.8b, v1.8b
	ld1 {v0.4s}, [x0]
	ld1 {v0.16b, v1.16b}, [x0], #32
	ld3 {v0.4s, v1.4s, v2.4s}, [x1]
	st4 {v29.h, v30.h, v31.h, v0.h}[0], [x18], x3
	ld1 {v4.b}[15], [x2]
	st1 {v0.2d, v1.2d, v2.2d, v3.2d}, [x0]
	ld1r {v0.4s}, [x1]
	ld2 {v0.4s, v1.4s}, [x0], x2
	tbl v0.16b, {v1.16b}, v2.16b
	ext v0.16b, v1.16b, v2.16b, #8
	shl v0.4s, v1.4s, #3
	ushr v0.2d, v1.2d, #63
	sshr d0, d1, #1
	xtn v0.4h, v1.4s
	cmeq v0.4s, v1.4s, #0
	cmhi v0.16b, v1.16b, v2.16b
	bif v0.16b, v1.16b, v2.16b
	zip1 v0.4s, v1.4s, v2.4s
	uzp2 v0.8h, v1.8h, v2.8h
	rev64 v0.4s, v1.4s
	dmb ish
	dmb ishld
	dsb sy
	isb
	mrs x0, tpidr_el0
	msr fpcr, x0
	mrs x1, nzcv
	nop
	yield
	hint #0x22
	bti c
	paciasp
	autiasp
	brk #0x3e8
	svc #0
	udf #0
	adrp x0, table
	add x0, x0, :lo12:table
	ldr x3, [x0, :lo12:table]
	bl g
	b g
	adr x1, 1f
	ldr x2, 1f
	ldr w3, 1f
	prfm pldl1keep, 1f
	cbz x0, 1f
	cbnz w1, 1f
	tbz w0, #3, 1f
	tbnz x0, #63, 1f
	b.ne 1f
	b.eq 1f
	b.lt 1f
	b.hs 1f
	b.lo 1f
	b.hi 1f
	b.ls 1f
	b.ge 1f
	b.gt 1f
	b.le 1f
	b.mi 1f
	b.pl 1f
	b.vs 1f
	b.vc 1f
	bl f
	b f
	mov x0, #0x5555555555555555
	mov w0, #0x7fffffff
	mov x0, #-0x10000
1:	br x0
	blr x1
	ret
	ret x1
	ldp x29, x30, [sp], #48
	.size f, .-f
	.type g, %function
g:
	ret
	.size g, .-g
	.data
	.type table, %object
table:	.quad 1, 2, 3
	.size table, 24

/*
 * dwminus1: a call stack whose outermost return address is -1 (as the stacks of clone's
 * children and of some static binaries' _start end, unwound): main pushes -1 and jumps
 * into spin, so spin's CFI gives -1 as the address it returns to.  perf's unwinder keeps
 * it as a frame in no map (ffffffffffffffff [unknown]).  Built -O2 -fomit-frame-pointer -g.
 * usage: dwminus1 [LOOPS]
 */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline, used)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
	exit(0);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 200000000UL;
	__asm__ volatile("mov %0, %%rdi\n\tand $-16, %%rsp\n\tpush $-1\n\tjmp spin"
			 : : "r"(n) : "rdi", "memory");
	return 0;
}

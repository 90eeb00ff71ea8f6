/*
 * jitprog: "JIT" code in an anonymous executable mapping, named by a perf map.
 *
 * Copies two spin loops (x86-64 machine code) into PROT_EXEC anonymous memory, writes
 * DIR/perf-<pid>.map naming them (plus lines perf skips), then runs them: jit_alpha does
 * 3 units of work, jit_beta 1.   usage: jitprog [UNITS] [DIR]   (DIR defaults to /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* spin: mov rax, rdi; 1: sub rax, 1; jnz 1b; ret */
static const unsigned char SPIN[] = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3};

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memset(code, 0xcc, 4096);
	memcpy(code, SPIN, sizeof(SPIN));
	memcpy(code + 0x40, SPIN, sizeof(SPIN));

	char path[4096];
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 2;
	fprintf(f, "%lx 40 jit_alpha\n", (unsigned long)code);
	fprintf(f, "this line is not a symbol\n");
	fprintf(f, "%lx 40 jit_beta [jitted]\n", (unsigned long)(code + 0x40));
	fprintf(f, "%lx 8 ab\n", (unsigned long)(code + 0x80));
	fprintf(f, "0x%lx 0 jit_zero_size\n", (unsigned long)(code + 0x90));
	fclose(f);

	unsigned long (*alpha)(unsigned long) = (unsigned long (*)(unsigned long))code;
	unsigned long (*beta)(unsigned long) = (unsigned long (*)(unsigned long))(code + 0x40);
	unsigned long r = alpha(3 * units * 100000000UL) + beta(units * 100000000UL);
	printf("%lu\n", r);
	return 0;
}

/* Frame-pointer chains with a frame record planted by hand, for the callchain entries
 * perf names by rules of their own.  main calls in_kernel() with %rbp pointing at a
 * frame record of ours, so perf's frame-pointer walk, after main, reads:
 *
 *   root     one record whose return address is in no map (0x7fff12345678): the
 *            outermost frame has no map;
 *   middle   that record, then one returning into main: an address in no map between
 *            two mapped frames;
 *   dropped  a return address of ~0, which perf 6.1 reads as an unknown context
 *            marker: it drops the whole chain.
 *
 * in_kernel() makes getppid system calls for 2 s: most samples are in the kernel. */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct frame { struct frame *next; uintptr_t ret; };
static struct frame outer = { 0, 0 };
static struct frame planted = { 0, 0x7fff12345678 };

__attribute__((noinline)) void in_kernel(void)
{
    time_t end = time(0) + 2;
    while (time(0) < end)
        for (int i = 0; i < 1000; i++)
            syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "root";
    if (!strcmp(how, "middle")) {
        outer.ret = (uintptr_t)&main + 1;
        planted.next = &outer;
    } else if (!strcmp(how, "dropped")) {
        planted.ret = ~(uintptr_t)0;
    }
    __asm__ volatile("push %%rbp\n\tmov %0, %%rbp\n\tcall in_kernel\n\tpop %%rbp"
                     :: "r"(&planted)
                     : "memory", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
    return 0;
}

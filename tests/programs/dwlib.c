/*
 * dwlib: the shared library of dwchain (built -O2 -fomit-frame-pointer -g -fPIC -shared):
 * work that calls back into the program, and a tiny function called through the PLT.
 */
#include "dwlib.h"

__attribute__((noinline)) static unsigned long dwlib_inner(unsigned long n,
							    unsigned long (*cb)(unsigned long))
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += cb(i) ^ (s >> 3);
	return s;
}

unsigned long dwlib_work(unsigned long n, unsigned long (*cb)(unsigned long))
{
	return dwlib_inner(n, cb) + 1;
}

unsigned long dwlib_tiny(unsigned long x)
{
	return x * 3 + 1;
}

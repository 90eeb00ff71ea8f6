#ifndef DWLIB_H
#define DWLIB_H
unsigned long dwlib_work(unsigned long n, unsigned long (*cb)(unsigned long));
unsigned long dwlib_tiny(unsigned long x);
#endif

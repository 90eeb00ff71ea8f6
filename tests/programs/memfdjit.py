"""Runs a busy loop in a memfd map and in an anonymous executable map (no perf map written):
the maps perf expects to find no file for."""
import ctypes
import mmap
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
code = b"\xb9\x00\x00\x00\x18\xff\xc9\x75\xfc\xc3"  # mov $N,%ecx; 1: dec %ecx; jnz 1b; ret
fd = os.memfd_create("sealed-jit")
os.write(fd, code.ljust(4096, b"\xc3"))
a1 = libc.mmap(None, 4096, mmap.PROT_READ | mmap.PROT_EXEC, mmap.MAP_SHARED, fd, 0)
a2 = libc.mmap(None, 4096, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC,
               mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
ctypes.memmove(a2, code, len(code))
for a in (a1, a2):
    ctypes.CFUNCTYPE(None)(a)()

"""Code: ELF images opened for their bytes, disassembly, relocations, source lines."""

"""Files a recording names: opened without trusting them, found in perf's order,
decompressed, and their ELF headers."""

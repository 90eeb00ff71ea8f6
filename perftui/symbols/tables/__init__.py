"""Symbol tables: ELF, kallsyms and perf maps as sorted arrays, by perf's rules."""

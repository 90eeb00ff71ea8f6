"""Names for addresses: thread and map model, ELF and kallsyms symbol tables, module
sections, perf maps, demangling, batch resolution (headless)."""

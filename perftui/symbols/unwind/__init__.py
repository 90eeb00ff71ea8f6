"""DWARF unwinding of user stacks (``perf record --call-graph dwarf``) and LBR call stacks."""

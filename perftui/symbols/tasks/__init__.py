"""Threads and maps over time, in the order perf 6.1 applies a recording's records."""

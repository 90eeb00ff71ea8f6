"""perftui: a terminal browser for Linux perf.data recordings."""

__version__ = "0.1.0"

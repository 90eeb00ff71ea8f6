"""Words: text tables and JSON for the command line and strings for the UI (headless)."""

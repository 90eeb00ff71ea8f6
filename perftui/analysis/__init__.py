"""Headless analysis: summaries, timeline bins, section and symbol counts."""

"""The Textual browser (the only part of perftui that imports textual and rich)."""

"""DWARF read as binutils' ``addr2line -i -f`` reads it: inline chains and source lines."""

"""Kernel modules: their files, names, sections and the KMOD_SEC_MAP section map."""

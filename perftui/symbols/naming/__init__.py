"""Naming samples: the resolver, interned locations and the names pass."""

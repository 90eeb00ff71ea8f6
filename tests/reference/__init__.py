"""Reference implementations that the tests check perftui's fast paths against
(moved out of perftui: nothing there calls them)."""

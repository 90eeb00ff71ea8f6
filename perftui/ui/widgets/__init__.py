"""Widgets of the browser."""

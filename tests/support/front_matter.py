"""Hostile front matter for the tests."""

from __future__ import annotations


def billion_laughs() -> str:
    """The probe's 500-byte bomb: ten levels of nine aliases each (~9^10 nodes expanded)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\n# Knie\n\nTekst.\n"

"""Shared JAX patterns: analyses several rules read, returning plain data (no findings, no fixes)."""

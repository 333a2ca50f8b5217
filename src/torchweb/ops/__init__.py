"""Ops: each defined once (shape rule, dtype rule, kernel, numpy body, backward)."""

"""Views (stub)."""

"""A plugin whose import fails (for the isolation tests)."""

raise ImportError("broken_import: this plugin cannot be imported (its native library is missing)")

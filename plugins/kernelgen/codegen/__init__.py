"""The kernel generator: OpenCL-independent templates written against a ``dialect.Dialect``."""

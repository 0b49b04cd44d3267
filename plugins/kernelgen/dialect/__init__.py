"""Kernel-language dialects: the spellings the generator needs (``base.Dialect``) and C (``c.CDialect``)."""

from .base import Dialect

__all__ = ["Dialect"]

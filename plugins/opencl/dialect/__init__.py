"""Kernel-language dialects: the spellings the generator needs (``base.Dialect``), OpenCL C first."""

from .base import Dialect
from .opencl import OPENCL, OpenCLDialect

__all__ = ["OPENCL", "Dialect", "OpenCLDialect"]

"""OpenCL C 1.2, the first dialect."""

from __future__ import annotations

from .base import Dialect


class OpenCLDialect(Dialect):
    """OpenCL C: ``__kernel``, ``__global``/``__local`` address spaces, ``get_*_id`` built-ins."""

    name = "opencl"
    kernel_prefix = "__kernel void"
    global_prefix = "__global "
    local_prefix = "__local "
    math_names = {"abs": "fabs", "round": "rint", "maximum": "fmax", "minimum": "fmin", "remainder": "fmod"}

    def header(self, dtypes) -> str:
        """``cl_khr_fp64`` when a double type is used, ``cl_khr_fp16`` when half is."""
        lines = []
        if {"float64", "complex128"} & set(dtypes):
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if "float16" in dtypes:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
        return "\n".join(lines) + ("\n" if lines else "")

    def global_id(self, axis: int = 0) -> str:
        """``get_global_id(axis)``."""
        return f"get_global_id({axis})"

    def local_id(self, axis: int = 0) -> str:
        """``get_local_id(axis)``."""
        return f"get_local_id({axis})"

    def group_id(self, axis: int = 0) -> str:
        """``get_group_id(axis)``."""
        return f"get_group_id({axis})"

    def local_size(self, axis: int = 0) -> str:
        """``get_local_size(axis)``."""
        return f"get_local_size({axis})"

    def barrier(self) -> str:
        """``barrier(CLK_LOCAL_MEM_FENCE);``."""
        return "barrier(CLK_LOCAL_MEM_FENCE);"

    def bitcast(self, ctype: str, expr: str) -> str:
        """``as_<type>(expr)``."""
        return f"as_{ctype}({expr})"


OPENCL = OpenCLDialect()

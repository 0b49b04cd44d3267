"""OpenCL C 1.2, the first dialect."""

from __future__ import annotations

from opweave_kernelgen import Dialect


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

    def vector_type(self, ctype: str, width: int) -> str:
        """``float16``, ``double8``...: OpenCL C's built-in vector types."""
        return f"{ctype}{width}"

    def aligned_load(self, vtype: str, ptr: str, index: str) -> str:
        """``((__global const floatN*)ptr)[index]``: a plain vector load (PoCL does not inline ``vloadN``)."""
        return f"(({self.global_prefix}const {vtype}*)({ptr}))[{index}]"

    def vector_store(self, width: int, value: str, ptr: str, index: str) -> str:
        """``vstoreN(value, index, ptr);``."""
        return f"vstore{width}({value}, {index}, {ptr});"

    def aligned_store(self, vtype: str, value: str, ptr: str, index: str) -> str:
        """``((__global floatN*)ptr)[index] = value;``."""
        return f"(({self.global_prefix}{vtype}*)({ptr}))[{index}] = {value};"

    def lane(self, expr: str, index: int) -> str:
        """``expr.sN`` (N a hexadecimal digit)."""
        return f"{expr}.s{index:x}"

    def splat(self, vtype: str, expr: str) -> str:
        """``(floatN)(expr)``: a scalar converts to every lane."""
        return f"(({vtype})({expr}))"

    def atomics_header(self) -> str:
        """``cl_khr_int64_base_atomics``, for ``atom_cmpxchg``/``atom_add`` on 64-bit words."""
        return "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"

    def atomic_cas(self, bits: int, ptr: str, expected: str, value: str) -> str:
        """``atomic_cmpxchg`` (32-bit) or ``atom_cmpxchg`` (64-bit)."""
        if bits == 64:
            return f"atom_cmpxchg((volatile __global ulong*)({ptr}), {expected}, {value})"
        return f"atomic_cmpxchg((volatile __global uint*)({ptr}), {expected}, {value})"

    def atomic_max(self, ptr: str, value: str) -> str:
        """``atomic_max`` on a 32-bit int."""
        return f"atomic_max((volatile __global int*)({ptr}), {value})"

    def atomic_add(self, bits: int, ptr: str, value: str) -> str:
        """``atomic_add`` (32-bit) or ``atom_add`` (64-bit)."""
        if bits == 64:
            return f"atom_add((volatile __global long*)({ptr}), {value})"
        return f"atomic_add((volatile __global int*)({ptr}), {value})"

    def global_barrier(self) -> str:
        """``barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);``."""
        return "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"


OPENCL = OpenCLDialect()

"""The dialect interface: everything the kernel generator needs to know about one C-like kernel language.

The generator (``opweave_kernelgen.codegen``) writes kernels in terms of a
:class:`Dialect`: how a kernel is declared, how a buffer argument is qualified,
how a work item finds its ids, how a work group synchronises, what a dtype is
called, which extension pragmas a dtype needs, and what the math functions are
called. OpenCL C (``opweave_opencl.dialect``) and C (``dialect.c``) are two; CUDA C and Metal
Shading Language are the same generator with another table.
"""

from __future__ import annotations

#: Storage type of each opweave dtype in C-like dialects; 16-bit floats and float8 travel as raw bits.
STORAGE_TYPES = {
    "bool": "uchar",
    "uint8": "uchar",
    "int8": "char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
    "uint16": "ushort",
    "uint32": "uint",
    "uint64": "ulong",
    "float16": "half",
    "bfloat16": "ushort",
    "float32": "float",
    "float64": "double",
    "complex64": "float2",
    "complex128": "double2",
}

#: The type arithmetic happens in ("opmath"): 16-bit floats compute in float32.
COMPUTE_TYPES = {"bfloat16": "float", "float16": "float", "bool": "uchar"}


class Dialect:
    """A C-like kernel language, as a table of spellings. Subclasses override what differs."""

    name = "c"
    kernel_prefix = "void"
    global_prefix = ""
    local_prefix = ""
    restrict = ""
    type_names: dict = STORAGE_TYPES
    math_names: dict = {}  # opweave name -> function name where they differ
    #: Whether the language has 64-bit atomic compare-and-swap (Metal has not: int64 scatter updates decline).
    atomics64 = True
    #: Whether the elementwise and reduction kernels run float16 on the device (loaded and computed in float,
    #: stored as half; CUDA). False keeps float16 arithmetic on the CPU fallback and every other program unchanged.
    computes_float16 = False
    #: Whether the contiguous elementwise kernels loop over the whole grid (``for (g = id; g < n; g += grid size)``,
    #: launched with at most ``DeviceProperties.grid_stride_items`` work items) instead of taking ``per`` elements
    #: each (CUDA). False keeps today's kernels.
    grid_stride = False
    #: Lanes of the subgroup the reductions finish in with ``subgroup_shuffle_down`` (CUDA: a warp of 32): each
    #: subgroup combines its lanes by shuffles, then one subgroup combines the subgroups' results, instead of a
    #: shared-memory tree with a barrier per step. 0 keeps today's tree and every other program unchanged.
    reduction_shuffle_width = 0

    def header(self, dtypes) -> str:
        """Pragmas and definitions the kernels of ``dtypes`` (dtype names) need, placed before them."""
        return ""

    def type_name(self, dtype: str) -> str:
        """The storage type of the opweave dtype named ``dtype``."""
        return self.type_names[dtype]

    def compute_type(self, dtype: str) -> str:
        """The type arithmetic on ``dtype`` is done in."""
        return COMPUTE_TYPES.get(dtype) or self.type_name(dtype)

    def kernel(self, name: str, params: list[str], body: str) -> str:
        """A whole kernel: declaration, parameters (through :meth:`param`, then :meth:`builtin_params`), body."""
        args = [self.param(p, i) for i, p in enumerate(params)] + self.builtin_params()
        return f"{self.kernel_prefix} {name}({', '.join(args)})\n{{\n{body}\n}}\n"

    def param(self, decl: str, index: int) -> str:
        """Kernel parameter number ``index`` as declared (C: unchanged; Metal adds ``[[buffer(index)]]``)."""
        return decl

    def builtin_params(self) -> list[str]:
        """Parameters appended to every kernel (Metal: the work-item ids, which are kernel arguments there)."""
        return []

    def buffer(self, ctype: str, name: str, const: bool = False) -> str:
        """A global-memory buffer parameter."""
        c = "const " if const else ""
        return f"{self.global_prefix}{c}{ctype}*{self.restrict} {name}"

    def local_array(self, ctype: str, name: str, size: int) -> str:
        """A work-group-shared array declaration."""
        return f"{self.local_prefix}{ctype} {name}[{size}];"

    def global_id(self, axis: int = 0) -> str:
        """Expression: the work item's global id along ``axis``."""
        raise NotImplementedError

    def local_id(self, axis: int = 0) -> str:
        """Expression: the work item's id within its group along ``axis``."""
        raise NotImplementedError

    def group_id(self, axis: int = 0) -> str:
        """Expression: the work group's id along ``axis``."""
        raise NotImplementedError

    def local_size(self, axis: int = 0) -> str:
        """Expression: the work-group size along ``axis``."""
        raise NotImplementedError

    def global_size(self, axis: int = 0) -> str:
        """Expression: the number of work items along ``axis`` (what a grid-stride loop steps by)."""
        raise NotImplementedError

    def barrier(self) -> str:
        """Statement: synchronise a work group on its shared memory."""
        raise NotImplementedError

    def bitcast(self, ctype: str, expr: str) -> str:
        """Expression: the bits of ``expr`` read as ``ctype`` (same size)."""
        raise NotImplementedError

    def cast(self, ctype: str, expr: str) -> str:
        """Expression: ``expr`` converted to ``ctype``."""
        return f"(({ctype})({expr}))"

    def math(self, name: str) -> str:
        """The name of math function ``name`` in this dialect."""
        return self.math_names.get(name, name)

    def vector_type(self, ctype: str, width: int) -> str:
        """The ``width``-lane vector of ``ctype`` (OpenCL ``float16``; a dialect without one raises)."""
        raise NotImplementedError

    def aligned_load(self, vtype: str, ptr: str, index: str) -> str:
        """Expression: vector ``index`` of the global array ``ptr``, which is aligned to the vector's size."""
        raise NotImplementedError

    def vector_store(self, width: int, value: str, ptr: str, index: str) -> str:
        """Statement: store vector ``value`` at ``ptr + index * width``."""
        raise NotImplementedError

    def aligned_store(self, vtype: str, value: str, ptr: str, index: str) -> str:
        """Statement: store vector ``value`` as vector ``index`` of the aligned global array ``ptr``."""
        raise NotImplementedError

    def lane(self, expr: str, index: int) -> str:
        """Expression: lane ``index`` of vector ``expr``."""
        raise NotImplementedError

    def splat(self, vtype: str, expr: str) -> str:
        """Expression: scalar ``expr`` in every lane of a ``vtype`` vector."""
        raise NotImplementedError

    def global_ptr(self, ctype: str) -> str:
        """The type of a pointer to global memory holding ``ctype`` (for casts)."""
        return f"{self.global_prefix}{ctype}*"

    def atomics_header(self) -> str:
        """Pragmas the 64-bit atomics below need."""
        return ""

    def atomic_cas(self, bits: int, ptr: str, expected: str, value: str) -> str:
        """Expression: compare-and-swap of the ``bits``-wide unsigned word at ``ptr``; returns the old word."""
        raise NotImplementedError

    def atomic_max(self, ptr: str, value: str) -> str:
        """Expression: atomic maximum of the 32-bit int at ``ptr`` and ``value`` (returns the old value)."""
        raise NotImplementedError

    def atomic_add(self, bits: int, ptr: str, value: str) -> str:
        """Expression: atomic add of ``value`` to the ``bits``-wide integer at ``ptr`` (returns the old value)."""
        raise NotImplementedError

    def global_barrier(self) -> str:
        """Statement: synchronise a work group on global memory (work items sharing a matrix in a buffer)."""
        raise NotImplementedError

    def subgroup_sum(self, expr: str) -> str:
        """Expression: the sum of ``expr`` over the subgroup (SIMD group, warp); a dialect without one raises."""
        raise NotImplementedError(f"the {self.name} dialect has no subgroup reductions")

    def subgroup_shuffle_down(self, expr: str, delta: str) -> str:
        """Expression: ``expr`` of the work item ``delta`` lanes further in the subgroup."""
        raise NotImplementedError(f"the {self.name} dialect has no subgroup shuffles")

    def function_prefix(self) -> str:
        """The qualifiers of a helper function that kernels call (CUDA would say ``__device__ inline``)."""
        return "inline"

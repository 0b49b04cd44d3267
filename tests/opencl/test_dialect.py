"""The generator is dialect-neutral: the same templates render OpenCL C and another C-like dialect."""

from __future__ import annotations

from opweave_kernelgen import Dialect
from opweave_kernelgen.codegen import elementwise, matmul, reduction
from opweave_kernelgen.codegen.common import coalesce
from opweave_opencl.dialect import OPENCL


class CudaLike(Dialect):
    """Enough of CUDA C's spellings to render the templates (never compiled here)."""

    name = "cuda"
    kernel_prefix = 'extern "C" __global__ void'
    local_prefix = "__shared__ "

    def global_id(self, axis=0):
        return "(blockIdx.x * blockDim.x + threadIdx.x)"

    def local_id(self, axis=0):
        return "threadIdx." + "xyz"[axis]

    def group_id(self, axis=0):
        return "blockIdx." + "xyz"[axis]

    def barrier(self):
        return "__syncthreads();"


def test_opencl_spellings():
    ops = {"add": ("float64", "x0 + x1"), "lt": ("bool", "x0 < x1")}
    src = elementwise.program(OPENCL, ops, ["float64", "float64"])
    assert "__kernel void s_float64(" in src and "__kernel void s_bool(" in src and "switch (p.opcode)" in src
    assert "__kernel void add_c(" in elementwise.program(OPENCL, ops, ["float64", "float64"], contiguous=True)
    assert "__global const double* a0" in src
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in src
    red = reduction.program(OPENCL, "bfloat16", "bfloat16", "bfloat16", 64)
    assert "__local float scratch[64];" in red and "barrier(CLK_LOCAL_MEM_FENCE);" in red
    assert "ow_bf16_to_float" in red


def test_another_dialect_reuses_the_templates():
    cuda = CudaLike()
    src = matmul.program(cuda, "float32")
    assert 'extern "C" __global__ void bmm(' in src
    assert "__syncthreads();" in src and "__shared__ float As" in src
    assert "__kernel" not in src and "get_local_id" not in src and "barrier(" not in src


def test_coalesce_merges_contiguous_dims_and_drops_unit_dims():
    assert coalesce([2, 3, 4], [[12, 4, 1], [12, 4, 1]]) == ([24], [[1], [1]])
    assert coalesce([2, 1, 3], [[3, 3, 1], [1, 0, 2]]) == ([2, 3], [[3, 1], [1, 2]])
    assert coalesce([4, 5], [[1, 4], [5, 1]]) == ([4, 5], [[1, 4], [5, 1]])

"""The prim kernels' host logic on a GPU-like device with fp16, launches recorded instead of run (no GPU needed).

A "dry" device has the CUDA dialect and an H100's properties (not a CPU, fp16, fp64, 1024
threads, 48 KiB of shared memory); its memory is host memory, its compiler records the
source and its launches do nothing. Running ops of every floating dtype on it finds the
paths that fail before a GPU is involved (a program without the kernel a dtype needs, a
dtype a template cannot render), and checks that every program the kernels build is one
``kernel_sources.programs`` renders, so the NVRTC test compiles what a GPU will.
"""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import numpy as np
import opweave as ow
import pytest
from opweave.backends import register_plugin
from opweave_cuda._runtime import CudaRuntime, launch_geometry
from opweave_kernelgen import DeviceProperties, KernelBackend, Runtime, register_kernels
from opweave_kernelgen.c_runtime import HostBuffer
from opweave_kernelgen.dialect.cuda import CUDA

sys.path.insert(0, str(Path(__file__).parent))
from kernel_sources import programs  # noqa: E402

NAME = "cudadry"
BUILT: dict = {}
LAUNCHES: list = []  # (kernel name, grid, block) of every launch


class _DryRuntime(Runtime):
    dialect = CUDA
    properties = DeviceProperties(
        is_cpu=False, max_work_group=1024, local_mem=48 * 1024, vector_bytes=16, has_fp16=True, has_fp64=True,
        has_bf16=True, subgroup_size=32, **launch_geometry(132, 2048),
    )  # fmt: skip
    device_name = f"{NAME}:0"
    overrides = CudaRuntime.overrides

    def allocate(self, nbytes):
        return HostBuffer(nbytes)

    def free(self, buffer):
        pass

    def copy_from_host(self, buffer, array, offset=0):
        buffer.view(offset, array.nbytes)[:] = array.reshape(-1).view(np.uint8)

    def copy_to_host(self, array, buffer, offset=0):
        array.reshape(-1).view(np.uint8)[:] = buffer.view(offset, array.nbytes)

    def copy_device(self, dst, src, nbytes, dst_offset=0, src_offset=0):
        dst.view(dst_offset, nbytes)[:] = src.view(src_offset, nbytes)

    def build(self, source, options):
        from opweave_cuda._nvrtc import kernel_names

        BUILT[source] = True
        return {name: name for name in kernel_names(source)}

    def launch(self, kernel, grid, block, args):
        from opweave_cuda._launch import Params, geometry

        geometry(grid, block, self.properties.max_work_group)
        Params(args)  # every argument packs
        LAUNCHES.append((kernel, tuple(grid), tuple(block)))

    def synchronize(self):
        pass


class _DryBackend(KernelBackend):
    name = NAME

    def __init__(self):
        super().__init__()
        self._rt = [_DryRuntime()]

    def runtimes(self):
        return self._rt


_BACKEND = _DryBackend()
_plugin = types.ModuleType("cudadry_plugin")


@ow.hookimpl
def opweave_register(registry):
    registry.backend(_BACKEND)
    register_kernels(registry, _BACKEND)


_plugin.opweave_register = opweave_register


def _t(shape, dtype):
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return ow.tensor(values, device=NAME).to(dtype)


def _idx(values):
    return ow.tensor(np.array(values, np.int64), device=NAME)


F = ow.nn.functional
CASES = {
    "add": lambda d: _t((4, 5), d) + _t((4, 5), d),
    "exp": lambda d: _t((4, 5), d).exp(),
    "sum": lambda d: _t((4, 5), d).sum(1),
    "amax": lambda d: _t((4, 5), d).amax(0),
    "mean": lambda d: _t((4, 5), d).mean(),
    "casts": lambda d: (_t((4,), d).float(), _t((4,), d).double(), _t((4,), d).long(), _t((4,), d).bool()),
    "from ints": lambda d: ow.arange(5, device=NAME).to(d),
    "from complex": lambda d: ow.ones(3, dtype=ow.complex64, device=NAME).to(d),
    "where": lambda d: ow.where(_t((3,), d) > 0, _t((3,), d), _t((3,), d)),
    "softmax": lambda d: ow.softmax(_t((3, 4), d), dim=1),
    "layer_norm": lambda d: F.layer_norm(_t((2, 8), d), (8,)),
    "cumsum": lambda d: _t((3, 4), d).cumsum(1),
    "sort": lambda d: _t((3, 4), d).sort(1),
    "topk": lambda d: _t((3, 4), d).topk(2),
    "matmul": lambda d: (_t((3, 4), d) @ _t((4, 2), d), _t((2, 3, 4), d) @ _t((2, 4, 2), d)),
    "conv2d": lambda d: F.conv2d(_t((1, 2, 5, 5), d), _t((3, 2, 3, 3), d)),
    "pools": lambda d: (F.max_pool2d(_t((1, 2, 6, 6), d), 2), F.avg_pool2d(_t((1, 2, 6, 6), d), 2)),
    "random": lambda d: (ow.rand(10, dtype=d, device=NAME), ow.randn(10, dtype=d, device=NAME)),
    "index_select": lambda d: _t((4, 5), d).index_select(0, _idx([0, 2])),
    "gather": lambda d: _t((4, 5), d).gather(1, _idx([[0, 1]] * 4)),
    "scatter_add": lambda d: ow.zeros(5, dtype=d, device=NAME).scatter_add(0, _idx([0, 1, 1]), _t((3,), d)),
    "var": lambda d: _t((4, 5), d).var(1),
    "argmax": lambda d: _t((4, 5), d).argmax(1),
    "clamp": lambda d: _t((4, 5), d).clamp(-1, 1),
    "activations": lambda d: (ow.relu(_t((4, 5), d)), F.silu(_t((4, 5), d)), F.gelu(_t((4, 5), d))),
    "gelu tanh": lambda d: F.gelu(_t((4, 5), d).t(), approximate="tanh"),
    "leaky_relu": lambda d: (F.leaky_relu(_t((4, 5), d)), F.leaky_relu(_t((1 << 15,), d), 3)),
    "erf": lambda d: ow.special.erf(_t((4,), d)),
    "lerp": lambda d: ow.lerp(_t((3,), d), _t((3,), d), 0.5),
    "full": lambda d: ow.full((3,), 2.0, dtype=d, device=NAME),
    "fft": lambda d: ow.fft.rfft(_t((8,), d).float()),
}


@pytest.fixture(scope="module", autouse=True)
def device():
    register_plugin(_plugin, NAME)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_ops_reach_their_kernels_or_decline_on_a_gpu_like_device(case, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CPU fallback's one-time warnings
        CASES[case](getattr(ow, dtype))


def test_every_program_the_kernels_built_is_rendered_for_the_nvrtc_test():
    for dtype in (ow.float16, ow.bfloat16, ow.float32):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for case in CASES.values():
                case(dtype)
    assert len(BUILT) > 20
    rendered = set(programs(CUDA).values())
    missing = [src[-300:] for src in BUILT if src not in rendered]
    assert not missing, f"{len(missing)} program(s) built by the kernels are not in kernel_sources.programs"


def test_launch_geometry_follows_the_device_properties():
    """A large contiguous elementwise op is one grid-stride launch of at most ``grid_stride_items`` items in
    256-thread blocks; a sum of many elements into one output uses ``reduction_groups`` groups of 256, then one."""
    props = _DryRuntime.properties
    x = _t((1 << 20,), ow.float32)
    LAUNCHES.clear()
    x + x
    ((kernel, grid, block),) = LAUNCHES
    assert kernel == "add_c" and block == (props.grid_stride_local,) == (256,)
    assert grid[0] * block[0] <= props.grid_stride_items and grid[0] * block[0] >= props.grid_stride_items - 256
    LAUNCHES.clear()
    x.sum()
    first, second = LAUNCHES
    assert first[0] == "sum_first" and first[1] == (props.reduction_groups,) and first[2] == (256,)
    assert second[0] == "sum_part" and second[1] == (1,) and second[2] == (256,)
    LAUNCHES.clear()
    _t((64, 1 << 10), ow.float32).sum(1)  # many outputs: one group each
    ((kernel, grid, block),) = LAUNCHES
    assert kernel == "sum_main" and grid == (64,) and block == (256,)


def test_softmax_rows_are_one_block_each_and_other_layouts_decompose():
    x, y = _t((5, 1000), ow.float32), _t((2, 3, 7), ow.float64)
    LAUNCHES.clear()
    ow.softmax(x, dim=-1)
    assert LAUNCHES == [("softmax_rows", (5,), (256,))]
    LAUNCHES.clear()
    ow.log_softmax(y, dim=2)
    assert LAUNCHES == [("log_softmax_rows", (6,), (256,))]
    LAUNCHES.clear()
    ow.softmax(x, dim=0)
    assert "softmax_rows" not in [name for name, _, _ in LAUNCHES] and len(LAUNCHES) > 1


def test_float16_extra_prims_run_their_own_kernels():
    """The extra elementwise prims of float16 are one float16 kernel launch each: no conversion, no CPU fallback."""
    x, y = _t((4, 5), ow.float16), _t((4, 5), ow.float16)
    calls = [
        lambda: ow.ops.prims.clamp(x, y, y),
        lambda: ow.ops.prims.lerp(x, y, y),
        lambda: ow.ops.prims.sign(x),
        lambda: ow.ops.prims.floor_divide(x, y),
        lambda: ow.ops.prims.logaddexp(x, y),
        lambda: ow.ops.prims.xlogy(x, y),
    ]
    before = sum(ow.dispatch.cpu_fallback_calls().values())
    for call in calls:
        LAUNCHES.clear()
        assert call().dtype == ow.float16
        assert [name for name, _, _ in LAUNCHES] == ["s_float16"]
    assert sum(ow.dispatch.cpu_fallback_calls().values()) == before
    LAUNCHES.clear()
    with pytest.warns(UserWarning, match="prims::nextafter: no cudadry kernel"):
        ow.ops.prims.nextafter(x, y)  # its step is half's: the CPU kernel
    assert sum(ow.dispatch.cpu_fallback_calls().values()) == before + 1


_H = {"x": lambda: _t((2, 4, 6), ow.float16), "v": lambda: _t((8,), ow.float16)}
P = ow.ops.prims
#: float16 prims of the templates that gained float16 where the dialect computes it -> the kernels they launch.
#: (``unique`` reads its group count back from the device, which a dry device never computes: not here.)
FLOAT16_PRIMS = {
    "max_pool": (lambda x, v: P.max_pool(x[None], [2, 2], [2, 2], [0, 0], [1, 1], False), ["max_pool"]),
    "avg_pool": (lambda x, v: P.avg_pool(x[None], [2, 2], [2, 2], [0, 0], False, True, None), ["avg_pool"]),
    "adaptive_max_pool": (lambda x, v: P.adaptive_max_pool(x[None], [3, 3]), ["max_pool"]),
    "adaptive_avg_pool": (lambda x, v: P.adaptive_avg_pool(x[None], [3, 3]), ["avg_pool"]),
    "cumsum": (lambda x, v: P.cumsum(x, 1), ["scan"]),
    "cumsum to float32": (lambda x, v: P.cumsum(x, 1, dtype=ow.float32), ["scan"]),
    "cumprod": (lambda x, v: P.cumprod(x, 2), ["scan"]),
    "cummax": (lambda x, v: P.cummax(x, 1), ["scan"]),
    "cummin": (lambda x, v: P.cummin(x, 0), ["scan"]),
    "logcumsumexp": (lambda x, v: P.logcumsumexp(x, 2), ["scan"]),
    "sort": (lambda x, v: P.sort(x, 2, False, True), ["sort_load", "sort_block", "sort_store"]),
    "topk": (lambda x, v: P.topk(x, 2, 2, True, True), ["sort_load", "sort_block", "sort_store"]),
    "kthvalue": (lambda x, v: P.kthvalue(x, 2, 1), ["sort_load", "sort_block", "sort_store"]),
    "mode": (lambda x, v: P.mode(x, 2), ["sort_load", "sort_block", "mode_rows"]),
    "searchsorted": (lambda x, v: P.searchsorted(v, v, False), ["searchsorted"]),
    "erfcx": (lambda x, v: P.erfcx(x), ["s_float16"]),
    "lgamma": (lambda x, v: P.lgamma(x), ["s_float16"]),
    "bessel_j0": (lambda x, v: P.bessel_j0(x), ["s_float16"]),
    "zeta": (lambda x, v: P.zeta(x, x), ["s_float16"]),
    "polygamma": (lambda x, v: P.polygamma(x, 2), ["s_float16"]),
    "hermite_polynomial_h": (lambda x, v: P.hermite_polynomial_h(x, x), ["s_float16"]),
    "argmax": (lambda x, v: P.argmax(x, 2), ["argext"]),
    "argmin": (lambda x, v: P.argmin(x, None), ["argext"]),
    "convolution": (
        lambda x, v: P.convolution(x[None], x[None, :, :3, :3], None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
        ["conv"],
    ),
    "mm": (lambda x, v: P.mm(x[0], x[1].T), ["bmm"]),
    "bmm": (lambda x, v: P.bmm(x, x.transpose(1, 2)), ["bmm"]),
    "round_decimals": (lambda x, v: P.round_decimals(x, 2), ["s_float16"]),
    "nan_to_num": (lambda x, v: P.nan_to_num(x, None, None, None), ["s_float16"]),
    "logit with eps": (lambda x, v: P.logit(x, 1e-3), ["s_float16"]),
}


@pytest.mark.parametrize("case", sorted(FLOAT16_PRIMS))
def test_float16_prims_launch_their_own_kernels(case):
    """pooling, scans, sorting, special functions, the tiled matmul and the parameter ops of float16 launch
    float16 kernels on a device whose dialect computes float16: no conversion launch, no CPU fallback."""
    call, kernels = FLOAT16_PRIMS[case]
    x, v = _H["x"](), _H["v"]()
    before = sum(ow.dispatch.cpu_fallback_calls().values())
    LAUNCHES.clear()
    result = call(x, v)
    first = result[0] if isinstance(result, tuple) else result
    dtypes = {"cumsum to float32": ow.float32, "searchsorted": ow.int64, "argmax": ow.int64, "argmin": ow.int64}
    assert first.dtype == dtypes.get(case, ow.float16)
    assert [name for name, _, _ in LAUNCHES] == kernels
    assert sum(ow.dispatch.cpu_fallback_calls().values()) == before


def test_float16_programs_are_rendered_for_the_nvrtc_test():
    """Every program the float16 prims above build is one ``kernel_sources.programs`` renders (NVRTC compiles it)."""
    BUILT.clear()
    x, v = _H["x"](), _H["v"]()
    for call, _ in FLOAT16_PRIMS.values():
        call(x, v)
    rendered = set(programs(CUDA).values())
    missing = [src[-300:] for src in BUILT if src not in rendered]
    assert not missing, f"{len(missing)} float16 program(s) are not in kernel_sources.programs"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32"])
@pytest.mark.parametrize(
    "act",
    [ow.relu, F.silu, F.gelu, lambda x: F.gelu(x, approximate="tanh"), lambda x: F.leaky_relu(x, 0.2)],
    ids=["relu", "silu", "gelu", "gelu_tanh", "leaky_relu"],
)
def test_activations_are_one_launch_without_fallback(act, dtype):
    """relu/silu/gelu run one generated kernel (no decomposition, no CPU fallback), contiguous or strided."""
    if dtype == "int32" and act is not ow.relu:
        pytest.skip("silu/gelu/leaky_relu have no integer form (PyTorch raises too)")
    d = getattr(ow, dtype)
    for x in (_t((4, 5), d), _t((4, 6), d)[:, ::2], _t((1 << 15,), d)):
        LAUNCHES.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a CPU fallback warns
            out = act(x)
        assert len(LAUNCHES) == 1, LAUNCHES
        assert out.shape == x.shape and out.dtype == x.dtype and out.device == x.device


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize(
    "expr",
    [lambda x: x - 2.0, lambda x: 3 * x, lambda x: 1 - x, lambda x: x + ow.tensor(2, dtype=x.dtype)],
    ids=["a - 2.0", "3 * a", "1 - a", "a + 0-dim"],
)
def test_tensor_scalar_ops_take_the_direct_kernel(expr, dtype):
    """A Python scalar (or a CPU 0-dim tensor of the dtype) beside a device tensor: one launch from the direct
    kernel's cached plan (``canonical._plans``), not the decomposition's."""
    from opweave_kernelgen.kernels import canonical

    d = getattr(ow, dtype)
    if dtype == "int32" and expr(ow.ones(1, dtype=d)).dtype is not d:
        pytest.skip("a float scalar promotes")
    x = _t((4, 5), d)
    canonical._plans.clear()
    LAUNCHES.clear()
    out = expr(x)
    assert len(LAUNCHES) == 1 and out.dtype is d and out.device == x.device
    assert [k[:2] for k in canonical._plans] in (
        [("sub", d)],
        [("mul", d)],
        [("add", d)],
    ), list(canonical._plans)

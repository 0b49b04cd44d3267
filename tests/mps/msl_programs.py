"""Every program the shared generator can emit for a Metal device, rendered without a device.

A Metal device has no double: its programs are those of a GPU-like device (``is_cpu`` False, no
``overrides``) without fp64, over the dtypes Metal has. Each entry renders one program the prim
kernels of ``opweave_kernelgen.kernels`` would build on such a device (the same source functions,
the same arguments). Programs the kernels build only where the device has fp64 (the special functions,
Philox's float arithmetic, weighted ``bincount``) are not among them: on Metal those prims decline to the
CPU. A program that needs what Metal lacks raises ``TypeError`` or ``NotImplementedError`` when rendered
and is listed in ``refused`` with the reason.
"""

from __future__ import annotations

import types

from opweave_kernelgen.codegen import complex as complex_gen
from opweave_kernelgen.codegen import (
    conv,
    creation_extra,
    fft,
    indexing,
    linalg,
    masked,
    matmul,
    pool,
    reduction,
    reduction_extra,
    scan,
    scatter,
    sort,
)
from opweave_kernelgen.codegen import elementwise as ew_gen
from opweave_kernelgen.dialect.msl import MSL
from opweave_kernelgen.kernels import complex as complex_k
from opweave_kernelgen.kernels import creation, data, elementwise, elementwise_extra
from opweave_kernelgen.kernels import scatter as scatter_k
from opweave_kernelgen.kernels._common import LOCAL
from opweave_kernelgen.runtime import DeviceProperties

#: An Apple GPU as the generator sees it (M1-M4: 32-wide SIMD groups, 1024 threads and 32 KiB per threadgroup).
APPLE_GPU = DeviceProperties(
    is_cpu=False, max_work_group=1024, local_mem=32 * 1024, vector_bytes=16, has_fp16=True, has_fp64=False,
    has_bf16=True, subgroup_size=32,
)  # fmt: skip
#: What the source functions read of a runtime: its dialect and properties.
RT = types.SimpleNamespace(dialect=MSL, properties=APPLE_GPU, is_cpu=False, has_fp64=False, has_fp16=True)

INTS = ("uint8", "int8", "int16", "int32", "int64")
REALS = ("bool", *INTS, "float16", "bfloat16", "float32")
ORDERED = ("bool", *INTS, "bfloat16", "float32")  # what the generator's real-number templates take
RAWS = ("uint8", "int16", "int32", "int64")  # element moves by size (16-byte elements need fp64)


def _families():
    """(family, name, maker) for every program; ``maker()`` renders it."""
    for arity in (1, 2):
        for d in REALS:
            for c in (False, True):
                yield "elementwise", f"ew{arity}_{d}_{c}", lambda a=arity, d=d, c=c: elementwise.source(MSL, a, d, c)
    for raw in RAWS:
        ops, ins = {"where": (raw, "x0 ? x1 : x2")}, ["bool", raw, raw]
        yield "elementwise", f"where_{raw}", lambda o=ops, i=ins: ew_gen.program(MSL, o, i)
        yield "elementwise", f"copy_{raw}", lambda r=raw: ew_gen.program(MSL, {"copy": (r, "x0")}, [r], True)
    for d in ORDERED:
        for c in (False, True):
            yield "data", f"convert_{d}_{c}", lambda d=d, c=c: ew_gen.program(MSL, data._convert_ops(d, RT), [d], c)
    for d in ("bool", *INTS, "bfloat16", "float32"):
        for c in (False, True):
            yield "elementwise_extra", f"ewx_{d}_{c}", lambda d=d, c=c: elementwise_extra._source(MSL, d, c)
    for d in ("bfloat16", "float32"):
        for c in (False, True):
            pair = elementwise_extra._param_dtype(RT)
            yield (
                "elementwise_extra",
                f"ewx_param_{d}_{c}",
                lambda d=d, c=c, p=pair: elementwise_extra._param_source(MSL, d, p, c),
            )
    for arity in (1, 2):
        for math in (False, True):
            ops = complex_k._ops(arity, "complex64", math, False)
            ins = ["complex64"] * arity
            yield "complex", f"c{arity}_{math}", lambda o=ops, i=ins: complex_gen.elementwise_program(MSL, o, i)
    for s in (*REALS, "complex64"):
        if s in ORDERED or s == "complex64":
            yield (
                "complex",
                f"cconvert_{s}",
                lambda s=s: complex_gen.elementwise_program(MSL, complex_k._convert_ops(s, RT), [s]),
            )
    yield "complex", "creduce", lambda: complex_gen.reduction_program(MSL, "complex64", "complex64", LOCAL)
    yield "complex", "cbmm", lambda: complex_gen.matmul_program(MSL, "complex64")
    for src in ORDERED:
        outs = (
            {src}
            | ({"int64"} if src in ("bool", *INTS) else set())
            | ({"bool"})
            | ({"float32"} if src == "bfloat16" else set())
        )
        for out in sorted(outs):
            yield "reduction", f"reduce_{src}_{out}", lambda s=src, o=out: reduction.program(MSL, s, o, o, LOCAL, False)
        yield "reduction", f"argext_{src}", lambda s=src: reduction_extra.arg_program(MSL, s, LOCAL)
        if src != "bool":
            for dst in sorted({src, "float32"}):
                yield (
                    "reduction",
                    f"var_{src}_{dst}",
                    lambda s=src, o=dst: reduction_extra.var_program(MSL, s, o, False, LOCAL),
                )
        for dst in sorted({src, "int64"}):
            yield "scan", f"scan_{src}_{dst}", lambda s=src, o=dst: scan.program(MSL, s, o, False)
        yield "sort", f"sort_{src}", lambda s=src: sort.program(MSL, s, LOCAL)
    for d in ("bfloat16", "float32"):
        yield "matmul", f"bmm_{d}", lambda d=d: matmul.program(MSL, d)
        yield "conv", f"conv_{d}", lambda d=d: conv.program(MSL, d)
        yield "conv", f"im2col_{d}", lambda d=d: conv.im2col_program(MSL, d)
        yield "pool", f"pool_{d}", lambda d=d: pool.program(MSL, d)
    for d in ("float32",):
        yield "fft", f"fft_{d}", lambda d=d: fft.program(MSL, d, False)
        yield "linalg", f"linalg_{d}", lambda d=d: linalg.program(MSL, d, False)
    yield "linalg", "linalg_complex64", lambda: linalg.program(MSL, "complex64", False)
    for d in ORDERED:
        yield "creation", f"iota_{d}", lambda d=d: creation._iota_source(ew_gen, MSL, d)
    for raw in RAWS:
        yield "creation", f"eye_{raw}", lambda r=raw: creation_extra.eye_program(MSL, r)
        for it in ("int32", "int64"):
            yield "indexing", f"take_along_{raw}_{it}", lambda r=raw, i=it: indexing.program(MSL, r, i)
    for d in ("int32", "int64"):
        yield "creation", f"tri_indices_{d}", lambda d=d: creation_extra.tri_indices_program(MSL, d)
    raws = scatter_k.raw_types(RT)
    yield "masked", "masked", lambda: masked.program(MSL, raws)
    yield "scatter", "scatter_move", lambda: scatter.move_program(MSL, raws)
    for d in scatter_k._ACCUMULATE:
        yield "scatter", f"scatter_acc_{d}", lambda d=d: scatter.accumulate_program(MSL, (d,))
    yield "scatter", "bincount", lambda: scatter.bincount_program(MSL, scatter_k._BINCOUNT, False)


def programs() -> tuple[dict, dict]:
    """``({name: source}, {name: reason refused})`` over every program family and Metal dtype."""
    rendered, refused = {}, {}
    for family, name, make in _families():
        try:
            rendered[f"{family}/{name}"] = make()
        except (TypeError, NotImplementedError) as exc:
            refused[f"{family}/{name}"] = f"{type(exc).__name__}: {exc}"
    return rendered, refused

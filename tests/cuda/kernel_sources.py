"""Every program the shared generator emits for a GPU device, rendered in a dialect without a device.

The prim kernels (``opweave_kernelgen.kernels``) build their programs lazily, one per
family and dtype specialisation (``program_kernels(rt, key, make_source)``). This module
renders the same sources for a GPU-like runtime (fp16 and fp64, not a CPU: no packed
matmul, no vector softmax) by calling the same source builders with the keys the kernels
use, for every dtype a kernel accepts. :data:`FAMILIES` names the key families covered;
``test_every_program_family_is_covered`` checks it against the keys the kernel modules use,
so a new family fails that test until it is added here.
"""

# ruff: noqa: B023  (each source lambda is called at once by add(), inside its loop iteration)
from __future__ import annotations

from types import SimpleNamespace

from opweave_kernelgen.codegen import complex as cgen
from opweave_kernelgen.codegen import conv as conv_gen
from opweave_kernelgen.codegen import creation_extra as cx_gen
from opweave_kernelgen.codegen import elementwise as ew_gen
from opweave_kernelgen.codegen import fft as fft_gen
from opweave_kernelgen.codegen import indexing as idx_gen
from opweave_kernelgen.codegen import linalg as la_gen
from opweave_kernelgen.codegen import masked as masked_gen
from opweave_kernelgen.codegen import matmul as mm_gen
from opweave_kernelgen.codegen import philox as philox_gen
from opweave_kernelgen.codegen import pool as pool_gen
from opweave_kernelgen.codegen import reduction as red_gen
from opweave_kernelgen.codegen import reduction_extra as rx_gen
from opweave_kernelgen.codegen import scan as scan_gen
from opweave_kernelgen.codegen import scatter as scatter_gen
from opweave_kernelgen.codegen import softmax as softmax_gen
from opweave_kernelgen.codegen import sort as sort_gen
from opweave_kernelgen.codegen import special as special_gen
from opweave_kernelgen.kernels import canonical_activations as act_k
from opweave_kernelgen.kernels import complex as ck
from opweave_kernelgen.kernels import creation as creation_k
from opweave_kernelgen.kernels import data as data_k
from opweave_kernelgen.kernels import elementwise as ew_k
from opweave_kernelgen.kernels import elementwise_extra as ewx_k
from opweave_kernelgen.kernels import scatter as scatter_k
from opweave_kernelgen.kernels import special as special_k

INTS = ("uint8", "int8", "int16", "int32", "int64")
REALS = ("bool", *INTS, "bfloat16", "float32", "float64")
FLOATS = ("bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
RAWS = ("uint8", "int16", "int32", "int64", "complex128")
LOCAL = 64

#: The program key families (``program_kernels(rt, (family, ...), ...)``) rendered here. ``bmm_packed``,
#: ``softmax`` and ``im2col`` are CPU-device variants (``Runtime.overrides``, ``is_cpu``) a GPU never selects.
FAMILIES = frozenset(
    {"ew", "where", "copy", "convert", "cew", "cangle", "cmake", "cconvert", "cbmm", "reduce", "ewx", "ewx_param",
     "special", "conv", "iota", "eye", "tri_indices", "take_along", "bmm", "linalg", "masked", "pool",
     "philox", "var", "argext", "scan", "scatter_move", "scatter_acc", "bincount", "sort", "fft", "softmax_group",
     "act"}
)  # fmt: skip
CPU_ONLY = frozenset({"bmm_packed", "softmax", "im2col"})


def _reduction_local(dialect) -> int:
    """The reductions' work-group size a device of ``dialect`` uses (CUDA: ``launch_geometry``'s; else 64)."""
    if dialect.name != "cuda":
        return LOCAL
    from opweave_cuda._runtime import launch_geometry

    return launch_geometry(132, 2048)["reduction_local"]


def programs(dialect) -> dict:
    """``{key: source}`` of every program a GPU device with fp16 and fp64 builds, in ``dialect``."""
    rt = SimpleNamespace(dialect=dialect, has_fp64=True, has_fp16=True, is_cpu=False)
    out: dict = {}

    def add(key, make):
        out[key] = make()

    half = dialect.computes_float16  # float16 elementwise and reduction kernels (CUDA)
    f16 = ("float16",) if half else ()  # the float16 specialisations, where the dialect has them
    for arity, table in ((1, ew_k.UNARY), (2, ew_k.BINARY)):
        for d in (*REALS, "float16") if half else REALS:
            if ew_k._ops(table, arity, d, half):
                for contiguous in (False, True):
                    add(("ew", arity, d, contiguous), lambda: ew_k._source(dialect, table, arity, d, contiguous))
    for d in (*INTS, *FLOATS, *f16):  # the one-launch activations (kernels.canonical_activations)
        for contiguous in (False, True):
            add(("act", d, contiguous), lambda: act_k.source(dialect, d, contiguous))
            if act_k.leaky_ops(dialect, d):
                add(("act", d, "leaky", contiguous), lambda: act_k.leaky_source(dialect, d, contiguous))
    for raw in RAWS:
        for contiguous in (False, True):
            ops, ins = {"where": (raw, "x0 ? x1 : x2")}, ["bool", raw, raw]
            add(("where", raw, contiguous), lambda: ew_gen.program(dialect, ops, ins, contiguous))
            add(("copy", raw, contiguous), lambda: ew_gen.program(dialect, {"copy": (raw, "x0")}, [raw], contiguous))
    for s in (*REALS, "float16"):
        for contiguous in (False, True):
            ops = data_k._convert_ops(s, rt)
            add(("convert", s, contiguous), lambda: ew_gen.program(dialect, ops, [s], contiguous=contiguous))
    for d in COMPLEX:
        wide = d == "complex64"
        for arity in (1, 2):
            for math in (False, True):
                ops = ck._ops(arity, d, math, wide)
                for contiguous in (False, True):
                    add(
                        ("cew", arity, d, math, contiguous),
                        lambda: cgen.elementwise_program(dialect, ops, [d] * arity, contiguous=contiguous, wide=wide),
                    )
        add(("cconvert", d), lambda: cgen.elementwise_program(dialect, ck._convert_ops(d, rt), [d]))
        add(("cbmm", d), lambda: cgen.matmul_program(dialect, d))
    for s in REALS:
        add(("cconvert", s), lambda: cgen.elementwise_program(dialect, ck._convert_ops(s, rt), [s]))
    for d in FLOATS:
        t = dialect.compute_type(d)
        ops = {"angle": (d, f"(isnan(x0) ? x0 : (x0 < 0 ? ({t})3.14159265358979323846 : ({t})0))")}
        add(("cangle", d), lambda: cgen.elementwise_program(dialect, ops, [d]))
    for d, c in (("float32", "complex64"), ("float64", "complex128")):
        ops = {n: (c, e.format(s=cgen.SUFFIX[c])) for n, e in ck.TO_COMPLEX.items()}
        add(("cmake", d), lambda: cgen.elementwise_program(dialect, ops, [d, d]))
    # reductions: every dtype as input, as accumulator and as output at least once
    triples = {(d, d, d) for d in REALS} | {(d, "bool", "bool") for d in REALS}
    triples |= {(d, "int64", "int64") for d in ("bool", *INTS)} | {(d, "float32", "float32") for d in FLOATS}
    triples |= {(d, "float64", "float64") for d in ("float32", "int64")}
    if half:  # a float16 accumulator is float32 (kernels.reductions)
        triples |= {("float16", "float32", "float16"), ("float16", "bool", "bool"), ("float16", "float32", "float32")}
        triples |= {("float32", "float32", "float16")}
    red_local = _reduction_local(dialect)
    for s, a, o in sorted(triples):
        add(("reduce", s, a, o), lambda: red_gen.program(dialect, s, a, o, red_local, False))
    for s, o in (("complex64", "complex64"), ("complex128", "complex128"), ("float32", "complex64")):
        add(("reduce", s, o), ck.reduction_source(dialect, s, o, LOCAL))
    for d in (*INTS, *FLOATS, *(("float16",) if half else ())):
        for contiguous in (False, True):
            add(("ewx", d, contiguous), lambda: ewx_k._source(dialect, d, contiguous))
    for d in (*FLOATS, *f16):
        for contiguous in (False, True):
            add(("ewx_param", d, contiguous), lambda: ewx_k._param_source(dialect, d, "complex128", contiguous))
        for arity in (1, 2):
            add(
                ("special", arity, d),
                lambda: special_gen.program(dialect, special_k._ops(arity, d), [d] * arity, special_k._sections(arity)),
            )
    for d in ("bfloat16", "float32", "float64", *COMPLEX, *f16):
        add(("conv", d), lambda: conv_gen.program(dialect, d))
    for d in (*REALS, "float16"):
        add(("iota", d), lambda: creation_k._iota_source(ew_gen, dialect, d))
    for d in ("int32", "int64"):
        add(("tri_indices", d), lambda: cx_gen.tri_indices_program(dialect, d))
    for raw in ("uint8", "int16", "int32", "int64"):
        add(("eye", raw), lambda: cx_gen.eye_program(dialect, raw))
    for raw in RAWS:
        for index in ("int32", "int64"):
            add(("take_along", raw, index), lambda: idx_gen.program(dialect, raw, index))
    for d in ("bfloat16", "float32", "float64", *INTS, *f16):
        add(("bmm", d), lambda: mm_gen.program(dialect, d))
    for d in ("float32", "float64", *COMPLEX):
        add(("linalg", d), lambda: la_gen.program(dialect, d, True))
    raws = scatter_k.raw_types(rt)
    add(("masked", raws), lambda: masked_gen.program(dialect, raws))
    add(("scatter_move", raws), lambda: scatter_gen.move_program(dialect, raws))
    add(("scatter_acc",), lambda: scatter_gen.accumulate_program(dialect, scatter_k._ACCUMULATE))
    add(("bincount",), lambda: scatter_gen.bincount_program(dialect, scatter_k._BINCOUNT, True))
    for d in ("bfloat16", "float32", "float64", *INTS, *f16):
        add(("pool", d), lambda: pool_gen.program(dialect, d))
    for d in ("bool", *INTS, *FLOATS, "float16"):
        add(("philox", d), lambda: philox_gen.program(dialect, d))
    for d in ("uint8", "int8", "int16", "int32", "int64", *FLOATS):
        add(("argext", d), lambda: rx_gen.arg_program(dialect, d, LOCAL))
        o = "float64" if d == "float64" else "float32"
        add(("var", d, o), lambda: rx_gen.var_program(dialect, d, o, True, LOCAL))
    for d in f16:
        add(("argext", d), lambda: rx_gen.arg_program(dialect, d, LOCAL))
    scans = [(d, d) for d in REALS] + [(d, "int64") for d in ("bool", *INTS)] + [("bfloat16", "float32")]
    scans += [("float16", "float16"), ("float16", "float32"), ("float32", "float16")] if half else []
    for s, o in scans:
        add(("scan", s, o), lambda: scan_gen.program(dialect, s, o, True))
    for d in (*REALS, *f16):
        add(("sort", d), lambda: sort_gen.program(dialect, d, LOCAL))
    for real in ("float16", "float32", "float64"):
        add(("fft", real), lambda: fft_gen.program(dialect, real, True))
    if dialect.name == "cuda":  # the runtimes with the "group_softmax" override: CUDA's (a warp of 32)
        for d in ("float32", "float64"):
            add(("softmax_group", d, 32), lambda: softmax_gen.group_program(dialect, d, 32))
    return out

"""Every MSL program the generator can emit compiles as C++17 against ``shim/metal_stdlib``.

No Metal compiler runs here. The shim declares Metal's built-in types, qualifiers and functions (and
nothing Metal lacks), so syntax errors, type errors, calls to functions Metal does not have, doubles,
writes through constant arguments and pointers that lose their address space fail as they would on a
Mac. What the shim cannot see (attributes, Metal's own overload set in detail, resource limits) is
checked textually below. The controls at the end show that the check can fail.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msl_programs
import pytest
from opweave_kernelgen.dialect.msl import ID_PARAMS, MSL

SHIM = Path(__file__).parent / "shim"
CXX = shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++ or clang++)")
BATCHES = 4  # translation units (two compile at a time)


@pytest.fixture(scope="module")
def rendered():
    """``({name: source}, {name: reason})`` of every Metal program."""
    return msl_programs.programs()


def _namespace(name: str) -> str:
    return "p_" + re.sub(r"\W", "_", name)


def _compile(source: str) -> subprocess.CompletedProcess:
    """``g++ -std=c++17 -fsyntax-only`` of ``source`` with the shim as ``<metal_stdlib>`` (no system headers)."""
    cmd = [CXX, "-std=c++17", "-fsyntax-only", "-nostdinc", "-w", f"-I{SHIM}", "-fmax-errors=20", "-x", "c++", "-"]
    return subprocess.run(cmd, input=source, capture_output=True, text=True, check=False)


def test_every_program_compiles_against_the_shim(rendered):
    sources, _ = rendered
    names = sorted(sources)
    assert len(names) > 150  # every family x every Metal dtype
    # one translation unit per batch: each program in a namespace of its own (the shim is included once)
    units = [
        "#include <metal_stdlib>\n"
        + "".join(f"namespace {_namespace(n)} {{\n{sources[n]}\n}}\n" for n in names[i::BATCHES])
        for i in range(BATCHES)
    ]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(_compile, units))
    failures = [r.stderr[:6000] for r in results if r.returncode]
    assert not failures, "\n\n".join(failures)


def test_every_kernel_argument_has_a_buffer_index(rendered):
    sources, _ = rendered
    count = 0
    for name, src in sources.items():
        for kname, params in re.findall(r"kernel void (\w+)\((.*?)\)\n\{", src, re.S):
            count += 1
            indices = [int(i) for i in re.findall(r"\[\[buffer\((\d+)\)\]\]", params)]
            assert indices == list(range(len(indices))), (name, kname, indices)
            assert len(indices) <= 31, (name, kname, "Metal binds at most 31 buffers")
            for decl in params.split(", "):
                if "[[buffer" in decl:  # a by-value argument is a constant reference; a buffer a device pointer
                    assert decl.startswith(("device ", "constant ")), (name, kname, decl)
                    assert ("*" in decl) == decl.startswith("device "), (name, kname, decl)
            assert all(p in params for p in ID_PARAMS), (name, kname)
            # a constant argument is only read once, into the thread variable the body uses (the shim cannot
            # tell a constant pointer from a thread one: taking the address of the argument itself would pass)
            for arg in re.findall(r"constant [\w ]+& (\w+_arg) \[\[", params):
                uses = len(re.findall(rf"\b{arg}\b", src))
                assert uses == src.count(f" {arg} [[") + src.count(f" = {arg};"), (name, kname, arg)
    assert count > 1000


_SIZES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "half": 2, "int": 4, "uint": 4, "float": 4}
_SIZES |= {"long": 8, "ulong": 8, "float2": 8}


def test_threadgroup_memory_fits_an_apple_gpu(rendered):
    sources, _ = rendered
    largest = 0
    for src in sources.values():
        for body in re.findall(r"kernel void \w+\(.*?\)\n\{(.*?)\n\}\n", src, re.S):
            arrays = re.findall(r"threadgroup (\w+) \w+\[(\d+)\];", body)
            largest = max(largest, sum(_SIZES[t] * int(n) for t, n in arrays))
    assert 0 < largest <= msl_programs.APPLE_GPU.local_mem


def test_no_opencl_spelling_is_left(rendered):
    sources, _ = rendered
    for name, src in sources.items():
        body = src.split("using namespace metal;", 1)[1]
        for spelling in ("__kernel", "__global", "__local", "get_global_id", "get_local_id", "CLK_", "vstore"):
            assert spelling not in body, (name, spelling)


def test_refused_programs_are_the_double_and_64_bit_atomic_ones(rendered):
    _, refused = rendered
    assert set(refused) == {
        "scatter/scatter_acc_int64",
        "scatter/scatter_acc_float64",
        "scatter/scatter_acc_complex128",
    }
    assert "64-bit atomic" in refused["scatter/scatter_acc_int64"]
    assert "mps device has no float64" in refused["scatter/scatter_acc_float64"]


def test_float64_and_complex128_raise_type_error_naming_the_device():
    for dtype in ("float64", "complex128"):
        with pytest.raises(TypeError, match=f"mps device has no {dtype}"):
            MSL.type_name(dtype)
    assert MSL.type_name("float16") == "half" and MSL.type_name("complex64") == "float2"


def test_subgroup_reductions_and_atomics_compile():
    body = "\n".join(
        [
            "    float v = a[(int)" + MSL.global_id(0) + "];",
            "    float s = " + MSL.subgroup_sum("v") + ";",
            "    float d = " + MSL.subgroup_shuffle_down("v", "16") + ";",
            "    " + MSL.atomic_add(32, "cnt", "1") + ";",
            "    " + MSL.atomic_add(64, "total", "(long)s") + ";",
            "    " + MSL.atomic_max("cnt", "(int)d") + ";",
            "    uint old = " + MSL.atomic_cas(32, "cnt", "0u", "1u") + ";",
            "    " + MSL.local_array("float", "tile", 64),
            "    tile[0] = v + (float)old;",
            "    " + MSL.barrier(),
            "    " + MSL.global_barrier(),
        ]
    )
    params = [MSL.buffer("float", "a", const=True), MSL.buffer("int", "cnt"), MSL.buffer("long", "total"), "long n"]
    src = MSL.header(["float32"]) + MSL.kernel("probe", params, body)
    result = _compile(src)
    assert result.returncode == 0, result.stderr
    assert "simd_sum(v)" in src and "[[thread_position_in_grid]]" in src and "constant long& n_arg [[buffer(3)]]" in src
    with pytest.raises(NotImplementedError, match="64-bit"):
        MSL.atomic_cas(64, "p", "a", "b")


_CONTROLS = {
    "a function Metal lacks": "kernel void k(device float* o [[buffer(0)]]) { o[0] = erf(o[0]); }",
    "a double": "kernel void k(device float* o [[buffer(0)]]) { double d = o[0]; o[0] = d; }",
    "a write through a constant argument": "kernel void k(constant long& n [[buffer(0)]]) { n = 1; }",
    "a device pointer as a thread pointer": "kernel void k(device float* o [[buffer(0)]]) { float* p = o; p[0] = 1; }",
    "as_type between sizes": "kernel void k(device uint* o [[buffer(0)]]) { o[0] = as_type<uint>((short)1); }",
    "an OpenCL built-in": "kernel void k(device float* o [[buffer(0)]]) { o[get_global_id(0)] = 1; }",
    "a mixed-type min": "kernel void k(device long* o [[buffer(0)]]) { o[0] = min(o[0], 1); }",
}


@pytest.mark.parametrize("what", sorted(_CONTROLS))
def test_the_shim_rejects(what):
    result = _compile("#include <metal_stdlib>\nusing namespace metal;\n" + _CONTROLS[what])
    assert result.returncode != 0, what

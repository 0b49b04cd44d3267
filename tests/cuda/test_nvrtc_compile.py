"""Every program the generator emits for a CUDA GPU compiles with NVRTC (no GPU needed), so a dialect error fails CI.

Two checks, sized for CI's two cores:

- every program through NVRTC's front end (``-dlto``: parsed, type-checked and lowered to NVVM IR) for
  ``sm_80`` and ``sm_90``, many programs per NVRTC call (each in a namespace of its own, kernels with C++
  linkage so that equal kernel names of different programs do not collide);
- a program of each kind (elementwise, reduction, matmul with shared memory, scatter with atomics, sort,
  special functions) all the way to a cubin for ``sm_80`` and ``sm_90`` exactly as the runtime compiles it
  (``opweave_cuda._nvrtc.compile_cubin``: SASS, not PTX, ptxas at full optimisation).

The whole cubin build of every program (what a GPU compiles on first use; tens of minutes on two cores) is
``python scripts/cuda_compile_all.py``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from kernel_sources import CPU_ONLY, FAMILIES, programs  # noqa: E402

_nvrtc = pytest.importorskip("opweave_cuda._nvrtc")
from opweave_kernelgen.dialect.cuda import CUDA, PRELUDE  # noqa: E402

NVRTC, REASON = _nvrtc.nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason=f"NVRTC is not available: {REASON}")

ARCHS = (80, 90)
BATCH = 40  # programs per NVRTC call
_SOURCES: dict = {}


def sources() -> dict:
    if not _SOURCES:
        _SOURCES.update(programs(CUDA))
    return _SOURCES


def _front_end(source: str, arch: int) -> str | None:
    """NVRTC's log if ``source`` (prelude included) fails the front end for ``sm_<arch>``, else None."""
    m = NVRTC
    err, prog = m.nvrtcCreateProgram(source.encode(), b"batch.cu", 0, [], [])
    assert err == m.nvrtcResult.NVRTC_SUCCESS
    try:
        opts = [o.encode() for o in (*_nvrtc.OPTIONS, f"--gpu-architecture=sm_{arch}", "-dlto")]
        (err,) = m.nvrtcCompileProgram(prog, len(opts), opts)
        if err == m.nvrtcResult.NVRTC_SUCCESS:
            return None
        return _nvrtc._log(m, prog)
    finally:
        m.nvrtcDestroyProgram(prog)


def _batch(items) -> str:
    parts = [PRELUDE]
    for i, (key, src) in enumerate(items):
        body = src.replace('extern "C" __global__', "__global__")
        parts.append(f"namespace ow_p{i} {{ /* {key} */\n{body}\n}}\n")
    return "".join(parts)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_generated_program_passes_nvrtc(arch):
    items = sorted(sources().items(), key=lambda kv: repr(kv[0]))
    failures = []
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        log = _front_end(_batch(chunk), arch)
        if log is None:
            continue
        for key, src in chunk:  # find the programs that fail, one by one
            one = _front_end(_batch([(key, src)]), arch)
            if one is not None:
                failures.append(f"{key}:\n{one[:2000]}")
        if not failures:
            failures.append(f"a batch failed though each program passes alone:\n{log[:2000]}")
    assert not failures, "\n\n".join(failures)


SAMPLES = [
    ("ew", 2, "float32", True),
    ("ew", 1, "bfloat16", False),
    ("reduce", "float32", "float32", "float32"),
    ("bmm", "float64"),
    ("scatter_acc",),
    ("sort", "int64"),
    ("philox", "float32"),
    ("convert", "float16", False),
    ("ew", 2, "float16", False),
    ("reduce", "float16", "float32", "float16"),
    ("scan", "float16", "float16"),
    ("sort", "float16"),
    ("pool", "float16"),
    ("bmm", "float16"),
    ("ewx_param", "float16", True),
    ("argext", "float16"),
    ("conv", "float16"),
]


@pytest.mark.parametrize("arch", ARCHS)
def test_sample_programs_compile_to_cubins(arch):
    for key in SAMPLES:
        cubin = _nvrtc.compile_cubin(sources()[key], arch, name=f"{key[0]}.cu")
        assert cubin[:4] == b"\x7fELF", key  # SASS in an ELF container, not PTX text
        for name in _nvrtc.kernel_names(sources()[key]):
            assert name.encode() in cubin, (key, name)


def test_a_dialect_error_is_reported_with_the_program_and_nvrtc_log():
    bad = CUDA.kernel("broken", [CUDA.buffer("float", "out")], "    out[0] = undeclared_thing;")
    with pytest.raises(RuntimeError, match="(?s)sm_90.*undeclared_thing"):
        _nvrtc.compile_cubin(bad, 90, name="broken.cu")
    assert _front_end(_batch([("broken", bad)]), 90) is not None


def test_every_program_family_is_covered():
    """The families the kernel modules build (``program_kernels(rt, ("family", ...``) are all rendered here."""
    kernels = Path(sys.modules["opweave_kernelgen.kernels"].__file__).parent
    used = set()
    for path in kernels.glob("*.py"):
        used |= set(re.findall(r'program_kernels\(\s*(?:self\.)?rt,\s*\(\s*"(\w+)"', path.read_text()))
        used |= set(re.findall(r'key, code = [^\n]*\("(\w+)", ', path.read_text()))
    assert used, "no program_kernels call found: the pattern is out of date"
    rendered = {key[0] for key in sources()}
    assert rendered == FAMILIES
    assert used - CPU_ONLY - {"cew", "cangle", "cmake", "cconvert"} <= FAMILIES, used - FAMILIES - CPU_ONLY

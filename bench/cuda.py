"""The CUDA backend next to PyTorch on the same GPU, in one run: prints figures and ratios, asserts nothing.

- device-to-device copy bandwidth of 256M float32 (bytes read + written per second), the reference for
- add of 256M float32, sum over 256M float32 and softmax 8192×8192 as fractions of that bandwidth (bytes an ideal
  kernel must move / time / copy bandwidth), for opweave and for PyTorch;
- float32 GEMM 8192³ with TF32 (precision "high") and with full FP32 ("highest"), and bfloat16 GEMM 8192³, in
  TFLOP/s and as a fraction of PyTorch's;
- per-op cost on tiny tensors for a basket of ops (host time per call, many calls, one synchronize), vs PyTorch
  CUDA eager;
- DLPack round trips with PyTorch (the same device pointer both ways).

Device times use CUDA events (``opweave.cuda.Event`` and ``torch.cuda.Event``, ``enable_timing=True``), the best of
a few rounds of several calls after a warm-up. Without a usable CUDA backend it prints why and exits 0.
Run: ``python bench/cuda.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

# This file is named cuda.py: with its folder first on sys.path (``python bench/cuda.py``), ``import cuda.bindings``
# (NVIDIA's package, which the CUDA plugin loads) would find this file instead, and the plugin would say that
# cuda-bindings is missing. The folder holds nothing this script imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import opweave as ow  # noqa: E402

ROUNDS = 3


def _cuda_unavailable_reason() -> str | None:
    """None if opweave's CUDA backend has a usable device, else why not."""
    try:
        module = ow.cuda
    except AttributeError:
        rows = [row for row in ow.backends.status() if getattr(row, "name", None) == "cuda"]
        detail = f": {rows[0]}" if rows else " (no 'cuda' plugin is installed: pip install 'opweave[cuda]')"
        return f"opweave has no CUDA device module{detail}"
    try:
        if not module.is_available():
            rows = [row for row in ow.backends.status() if getattr(row, "name", None) == "cuda"]
            return f"opweave.cuda.is_available() is False{': ' + str(rows[0]) if rows else ''}"
    except Exception as exc:
        return f"opweave.cuda.is_available() raised {type(exc).__name__}: {exc}"
    return None


def _torch() -> tuple[Any, str | None]:
    """PyTorch with CUDA, or (None, why not)."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed (pip install torch): no PyTorch column"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} has no usable CUDA device: no PyTorch column"
    return torch, None


class _HostEvent:
    """An event on the host clock (``--dry-run-on``): ``record`` reads the clock, ``elapsed_time`` in ms."""

    def __init__(self, enable_timing: bool = False):
        self.time = 0.0

    def record(self) -> None:
        """Read the host clock."""
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def elapsed_time(self, end: _HostEvent) -> float:
        """Milliseconds from this event to ``end``."""
        return (end.time - self.time) * 1e3


class Timer:
    """Times device work with one framework's CUDA events."""

    def __init__(self, event_class: Callable[..., Any], synchronize: Callable[[], None]):
        self.event_class = event_class
        self.synchronize = synchronize

    def seconds(self, fn: Callable[[], Any], iters: int, warmup: int = 2) -> float:
        """Best over :data:`ROUNDS` of the mean device time of ``iters`` back-to-back calls of ``fn``."""
        for _ in range(warmup):
            fn()
        self.synchronize()
        best = float("inf")
        for _ in range(ROUNDS):
            start, end = self.event_class(enable_timing=True), self.event_class(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) / 1e3 / iters)
        return best

    def host_per_call(self, fn: Callable[[], Any], calls: int) -> float:
        """Best over :data:`ROUNDS` of host seconds per call for ``calls`` calls followed by one synchronize."""
        for _ in range(20):
            fn()
        self.synchronize()
        best = float("inf")
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            self.synchronize()
            best = min(best, (time.perf_counter() - start) / calls)
        return best


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    print(f"\n{title}")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def main() -> int:
    """Measure and print the tables; 0 also when there is nothing to measure."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="sizes 16× smaller and fewer calls (a smoke run)")
    parser.add_argument(
        "--dry-run-on",
        metavar="DEVICE",
        help="run every case on another opweave device (e.g. cpu) with host-clock events and no PyTorch column: "
        "checks this script without a GPU; its figures mean nothing",
    )
    args = parser.parse_args()

    if args.dry_run_on:
        device, torch = args.dry_run_on, None
        ours = Timer(_HostEvent, lambda: None)
        print(f"dry run on {device}: host-clock timings, no PyTorch column")
    else:
        reason = _cuda_unavailable_reason()
        if reason is not None:
            print(f"bench/cuda.py: nothing to measure: {reason}")
            return 0
        device = "cuda"
        torch, torch_reason = _torch()
        if torch_reason:
            print(torch_reason)
        cuda = ow.cuda
        ours = Timer(cuda.Event, cuda.synchronize)
        print(f"device: {cuda.get_device_name()} (capability {cuda.get_device_capability()})")
        if torch:
            print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    theirs = Timer(torch.cuda.Event, torch.cuda.synchronize) if torch else None

    scale = 16 if args.quick else 1
    n = (256 << 20) // scale
    side = 8192 // (4 if args.quick else 1)

    def random(shape: tuple[int, ...], dtype: str = "float32"):
        """An opweave CUDA tensor (made by PyTorch and copied, when it is there: fast random fill on the GPU)."""
        if torch:
            t = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))
            return ow.from_dlpack(t).clone(), t
        return ow.randn(*shape, device=device, dtype=getattr(ow, dtype)), None

    # -- bandwidth: copy, add, sum, softmax ------------------------------------------------------------------------
    bandwidth_rows = []
    results: dict[str, tuple[float, float | None]] = {}

    def measure(label: str, bytes_moved: int, ow_fn, torch_fn, iters: int) -> None:
        try:
            t_ow = ours.seconds(ow_fn, iters)
        except Exception as exc:  # one failing case must not hide the others
            print(f"{label}: opweave failed: {type(exc).__name__}: {exc}")
            return
        t_torch = theirs.seconds(torch_fn, iters) if theirs and torch_fn else None
        results[label] = (bytes_moved / t_ow, bytes_moved / t_torch if t_torch else None)

    def streaming() -> None:  # its tensors are freed when it returns
        x_ow, x_t = random((n,))
        y_ow, y_t = random((n,))
        out_ow = ow.empty_like(x_ow)
        out_t = torch.empty_like(x_t) if torch else None
        measure("copy", 2 * 4 * n, lambda: out_ow.copy_(x_ow), (lambda: out_t.copy_(x_t)) if torch else None, 10)
        measure("add", 3 * 4 * n, lambda: x_ow + y_ow, (lambda: x_t + y_t) if torch else None, 10)
        measure("sum", 4 * n, lambda: x_ow.sum(), (lambda: x_t.sum()) if torch else None, 10)

    def softmax() -> None:
        s_ow, s_t = random((side, side))
        softmax_t = (lambda: torch.softmax(s_t, -1)) if torch else None
        measure("softmax", 2 * 4 * side * side, lambda: ow.softmax(s_ow, -1), softmax_t, 10)

    for section in (streaming, softmax):
        try:
            section()
        except Exception as exc:  # e.g. making the inputs failed
            print(f"{section.__name__}: failed: {type(exc).__name__}: {exc}")
    copy_bw = results.get("copy")
    reference = max(bw for bw in copy_bw if bw) if copy_bw else None
    labels = {
        "copy": f"copy {n >> 20}M f32 (d2d)",
        "add": f"add {n >> 20}M f32",
        "sum": f"sum {n >> 20}M f32",
        "softmax": f"softmax {side}x{side} f32",
    }
    for key, label in labels.items():
        if key not in results:
            bandwidth_rows.append((label, "failed", "", "", "", ""))
            continue
        bw_ow, bw_t = results[key]
        bandwidth_rows.append(
            (
                label,
                f"{bw_ow / 1e9:.0f}",
                f"{bw_t / 1e9:.0f}" if bw_t else "-",
                _fmt_ratio(bw_ow / reference if reference else None),
                _fmt_ratio(bw_t / reference if reference and bw_t else None),
                _fmt_ratio(bw_ow / bw_t if bw_t else None),
            )
        )
    _print_table(
        "Memory-bound ops: GB/s moved (ideal bytes / time); fraction of the best d2d copy bandwidth of this run",
        ("case", "opweave GB/s", "torch GB/s", "opweave/copy", "torch/copy", "opweave/torch"),
        bandwidth_rows,
    )

    # -- GEMM ------------------------------------------------------------------------------------------------------
    gemm_rows = []
    flops = 2 * side**3
    for label, dtype, precision in (
        (f"f32 GEMM {side}^3 TF32 (high)", "float32", "high"),
        (f"f32 GEMM {side}^3 FP32 (highest)", "float32", "highest"),
        (f"bf16 GEMM {side}^3", "bfloat16", "highest"),
    ):
        try:
            a_ow, a_t = random((side, side), dtype)
            b_ow, b_t = random((side, side), dtype)
        except Exception as exc:
            print(f"{label}: making the inputs failed: {type(exc).__name__}: {exc}")
            gemm_rows.append((label, "failed", "", ""))
            continue
        saved = ow.get_float32_matmul_precision()
        ow.set_float32_matmul_precision(precision)
        if torch:
            torch_saved = torch.get_float32_matmul_precision()
            torch.set_float32_matmul_precision(precision)
        iters = 5 if precision == "highest" and dtype == "float32" else 20
        try:
            t_ow = ours.seconds(lambda a=a_ow, b=b_ow: a @ b, iters)
            t_t = theirs.seconds(lambda a=a_t, b=b_t: a @ b, iters) if theirs else None
        except Exception as exc:
            print(f"{label}: failed: {type(exc).__name__}: {exc}")
            gemm_rows.append((label, "failed", "", ""))
            continue
        finally:
            ow.set_float32_matmul_precision(saved)
            if torch:
                torch.set_float32_matmul_precision(torch_saved)
        gemm_rows.append(
            (
                label,
                f"{flops / t_ow / 1e12:.1f}",
                f"{flops / t_t / 1e12:.1f}" if t_t else "-",
                _fmt_ratio(t_t / t_ow if t_t else None),
            )
        )
    _print_table("GEMM: TFLOP/s", ("case", "opweave", "torch", "opweave/torch"), gemm_rows)

    # -- per-op cost on tiny tensors -------------------------------------------------------------------------------
    try:
        small_ow, small_t = random((4, 4))
        other_ow, other_t = random((4, 4))
    except Exception as exc:
        print(f"tiny tensors: making the inputs failed: {type(exc).__name__}: {exc}")
        small_ow = small_t = other_ow = other_t = None
    basket: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
        ("add", lambda m, a, b: a + b),
        ("mul", lambda m, a, b: a * b),
        ("sub scalar", lambda m, a, b: a - 2.0),
        ("div", lambda m, a, b: a / b),
        ("neg", lambda m, a, b: -a),
        ("exp", lambda m, a, b: m.exp(a)),
        ("tanh", lambda m, a, b: m.tanh(a)),
        ("sigmoid", lambda m, a, b: m.sigmoid(a)),
        ("relu", lambda m, a, b: m.relu(a)),
        ("where", lambda m, a, b: m.where(a > b, a, b)),
        ("sum", lambda m, a, b: a.sum()),
        ("amax dim", lambda m, a, b: m.amax(a, 1)),
        ("softmax", lambda m, a, b: m.softmax(a, -1)),
        ("matmul", lambda m, a, b: a @ b),
        ("cat", lambda m, a, b: m.cat([a, b])),
        ("clone", lambda m, a, b: a.clone()),
        ("view+add_", lambda m, a, b: a.view(16).add_(1.0)),
    ]
    calls = 200 if args.quick else 2000
    cost_rows = []
    ratios = []
    for name, op in basket if small_ow is not None else []:
        try:
            c_ow = ours.host_per_call(lambda op=op: op(ow, small_ow, other_ow), calls)
        except Exception as exc:
            print(f"tiny {name}: opweave failed: {type(exc).__name__}: {exc}")
            cost_rows.append((name, "failed", "", ""))
            continue
        c_t = theirs.host_per_call(lambda op=op: op(torch, small_t, other_t), calls) if theirs else None
        cost_rows.append(
            (name, f"{c_ow * 1e6:.1f}", f"{c_t * 1e6:.1f}" if c_t else "-", _fmt_ratio(c_ow / c_t if c_t else None))
        )
        if c_t:
            ratios.append(c_ow / c_t)
    if ratios:
        cost_rows.append(("geometric mean", "", "", _fmt_ratio(math.prod(ratios) ** (1 / len(ratios)))))
    _print_table(
        "Per-op cost on 4x4 float32 tensors: µs per call (host)", ("op", "opweave", "torch", "ratio"), cost_rows
    )

    # -- DLPack ----------------------------------------------------------------------------------------------------
    if torch:
        print("\nDLPack with PyTorch")
        try:
            t = torch.arange(1024, device="cuda", dtype=torch.float32)
            o = ow.from_dlpack(t)
            back = torch.from_dlpack(o)
            print(f"  torch -> opweave -> torch: same pointer {back.data_ptr() == t.data_ptr()}", end="")
            print(f", opweave data_ptr {o.data_ptr() == t.data_ptr()}")
            t.add_(1)
            torch.cuda.synchronize()
            print(f"  a write in torch is seen by opweave: {float(o[5].item()) == 6.0}")
            mine = ow.ones(256, device=device)
            theirs_view = torch.from_dlpack(mine)
            again = ow.from_dlpack(theirs_view)
            print(
                f"  opweave -> torch -> opweave: same pointer {theirs_view.data_ptr() == mine.data_ptr()}"
                f" / {again.data_ptr() == mine.data_ptr()}"
            )
        except Exception as exc:
            print(f"  failed: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

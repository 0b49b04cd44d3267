"""CPU time of hot ops: opweave's kernel paths, PyTorch (if installed) and NumPy, in one run.

Prints one table; asserts nothing. Run: ``python bench/ops.py`` (``--repeat N`` for more runs per row).
Each time is the best of ``repeat`` calls, all columns measured in the same run, row by row
(the machine's load changes less between them). Columns: ``auto`` is opweave's default path
(``OPWEAVE_CPU_KERNELS=auto``: C kernels where they were measured faster, oneDNN, NumPy), ``c`` the
compiled C kernels wherever they have one (NumPy elsewhere), ``onednn`` oneDNN and NumPy without C,
``numpy`` the pure NumPy kernels (each switched in-process with ``opweave.cpu.set_kernel_path``);
then PyTorch and the NumPy formula. The ratios are a path over PyTorch (the target is 1.2x, 1.5x
for SDPA). A row whose op is missing from the catalog is printed with a note instead of times.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import opweave as ow
import scipy.special as sp

F = ow.nn.functional


def best(fn, repeat: int) -> float:
    """Best wall time of ``fn()`` in milliseconds over ``repeat`` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


# -- NumPy versions of the same math --------------------------------------------------------------


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def np_gelu(x):
    return 0.5 * x * (1 + sp.erf(x * np.float32(1 / math.sqrt(2))))


def np_cross_entropy(logits, target):
    m = logits.max(1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
    return np.mean(lse - np.take_along_axis(logits, target[:, None], 1)[:, 0])


def np_conv2d(x, w, padding=1):
    n, c, h, wd = x.shape
    k = w.shape[-1]
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))  # n, c, h, w, k, k
    return np.einsum("nchwij,ocij->nohw", cols, w, optimize=True)


def np_sdpa(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * np.float32(1 / math.sqrt(q.shape[-1]))
    return np_softmax(s) @ v


# -- cases --------------------------------------------------------------------------------------------------


def cases(rng):
    """(name, opweave call or None with a note, NumPy call, PyTorch call builder)."""
    f32 = np.float32
    x = rng.standard_normal((4096, 1024)).astype(f32)
    w, b = rng.standard_normal(1024).astype(f32), rng.standard_normal(1024).astype(f32)
    g = rng.standard_normal(16 * 2**20).astype(f32)
    logits = rng.standard_normal((4096, 1000)).astype(f32)
    target = rng.integers(0, 1000, 4096)
    img = rng.standard_normal((8, 64, 56, 56)).astype(f32)
    filt = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(f32)
    q, k, v = (rng.standard_normal((8, 8, 512, 64)).astype(f32) for _ in range(3))
    sig = rng.standard_normal(2**20).astype(f32)
    r = rng.standard_normal((4096, 4096)).astype(f32)
    a, lw, lb = (rng.standard_normal(s).astype(f32) for s in ((4096, 1024), (1024, 1024), (1024,)))
    t = ow.tensor
    tx, tw, tb, tg, tlogits, ttarget = t(x), t(w), t(b), t(g), t(logits), t(target)
    timg, tfilt, tq, tk, tv, tsig = t(img), t(filt), t(q), t(k), t(v), t(sig)
    tr, ta, tlw, tlb = t(r), t(a), t(lw), t(lb)
    rows = [
        ("softmax 4096x1024", lambda: F.softmax(tx, -1), lambda: np_softmax(x), ("softmax", (x,), {"dim": -1})),
        (
            "layer_norm 4096x1024",
            lambda: F.layer_norm(tx, [1024], tw, tb),
            lambda: np_layer_norm(x, w, b),
            ("layer_norm", (x, [1024], w, b), {}),
        ),
        ("gelu 16M", lambda: F.gelu(tg), lambda: np_gelu(g), ("gelu", (g,), {})),
        (
            "cross_entropy 4096x1000",
            lambda: F.cross_entropy(tlogits, ttarget),
            lambda: np_cross_entropy(logits, target),
            ("cross_entropy", (logits, target), {}),
        ),
        (
            "conv2d 8x64x56x56 3x3",
            (lambda: F.conv2d(timg, tfilt, None, 1, 1)) if hasattr(F, "conv2d") else None,
            lambda: np_conv2d(img, filt),
            ("conv2d", (img, filt, None, 1, 1), {}),
        ),
        (
            "sdpa 8x8x512x64",
            lambda: F.scaled_dot_product_attention(tq, tk, tv),
            lambda: np_sdpa(q, k, v),
            ("scaled_dot_product_attention", (q, k, v), {}),
        ),
        (
            "rms_norm 4096x1024",
            (lambda: F.rms_norm(tx, [1024], tw)) if hasattr(F, "rms_norm") else None,
            lambda: x / np.sqrt(np.mean(x * x, -1, keepdims=True) + np.finfo(f32).eps) * w,
            ("rms_norm", (x, [1024], w), {}),
        ),
        ("sum(-1) 4096x4096", lambda: tr.sum(-1), lambda: r.sum(-1), ("sum", (r, -1), {})),
        ("var(-1) 4096x4096", lambda: tr.var(-1), lambda: r.var(-1, ddof=1), ("var", (r, -1), {})),
        ("amax(0) 4096x4096", lambda: tr.amax(0), lambda: r.max(0), ("amax", (r, 0), {})),
        ("silu 16M (x*sigmoid(x))", lambda: F.silu(tg), lambda: g * sp.expit(g), ("silu", (g,), {})),
        ("exp 16M", lambda: ow.exp(tg), lambda: np.exp(g), ("exp", (g,), {})),
        ("a*2+1 16M (two ops)", lambda: tg * 2.0 + 1.0, lambda: g * f32(2) + f32(1), ("scale_shift", (g,), {})),
        ("linear 4096x1024x1024", lambda: F.linear(ta, tlw, tlb), lambda: a @ lw.T + lb, ("linear", (a, lw, lb), {})),
        (
            "rfft 2^20",
            (lambda: ow.fft.rfft(tsig)) if hasattr(getattr(ow, "fft", None), "rfft") else None,
            lambda: np.fft.rfft(sig),
            ("fft.rfft", (sig,), {}),
        ),
    ]
    return rows


def torch_call(spec):
    """A PyTorch call for ``spec`` (None without PyTorch)."""
    try:
        import torch
        import torch.nn.functional as tf
    except ImportError:
        return None
    name, args, kwargs = spec
    targs = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    special = {
        "fft.rfft": torch.fft.rfft,
        "sum": torch.sum,
        "var": torch.var,
        "amax": torch.amax,
        "exp": torch.exp,
        "scale_shift": lambda x: x * 2.0 + 1.0,
    }
    fn = special.get(name) or getattr(tf, name)
    return lambda: fn(*targs, **kwargs)


PATHS = ("auto", "c", "onednn", "numpy")


def kernel_path_switch():
    """``set_kernel_path(name)`` of the CPU device module, or None when it lacks one."""
    cpu = getattr(ow, "cpu", None)
    if cpu is None or not hasattr(cpu, "set_kernel_path"):
        return None
    print(f"cpu kernels (auto): {cpu.kernel_paths()}")
    return cpu.set_kernel_path


def on_path(set_path, path, fn, repeat):
    """Best time of ``fn`` on kernel path ``path`` (NaN when the paths cannot be switched)."""
    if set_path is None:
        return best(fn, repeat) if path == "auto" else float("nan")
    set_path(path)
    try:
        return best(fn, repeat)
    finally:
        set_path(None)


def main(argv=None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", default="", help="comma-separated substrings of the rows to run (default: all)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = cases(rng)
    if args.rows:
        rows = [row for row in rows if any(part in row[0] for part in args.rows.split(","))]
    have_torch = torch_call(("softmax", (np.zeros(1, np.float32),), {"dim": 0})) is not None
    if not have_torch:
        print("PyTorch is not installed: its column is left out (pip install torch)")
    set_path = kernel_path_switch()
    print("ms, best of", args.repeat)
    header = f"{'op':<26}" + "".join(f"{p:>8}" for p in PATHS)
    if have_torch:
        header += f"{'torch':>8}"
    header += f"{'numpy':>8}"
    if have_torch:
        header += f"{'auto/pt':>9}{'c/pt':>7}{'numpy/pt':>9}"
    print(header)
    for name, ow_fn, np_fn, spec in rows:
        t_np = best(np_fn, args.repeat)
        if ow_fn is None:
            print(f"{name:<26}{'(op missing)':>32}{'':>8}{t_np:>8.1f}")
            continue
        times = [on_path(set_path, p, ow_fn, args.repeat) for p in PATHS]
        line = f"{name:<26}" + "".join(f"{v:>8.1f}" for v in times)
        if have_torch:
            t_pt = best(torch_call(spec), args.repeat)
            line += f"{t_pt:>8.1f}"
        line += f"{t_np:>8.1f}"
        if have_torch:
            line += f"{times[0] / t_pt:>8.2f}x{times[1] / t_pt:>6.2f}x{times[3] / t_pt:>8.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()

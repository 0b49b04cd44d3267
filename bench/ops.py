"""CPU time of hot nn ops: opweave's default kernels, its pure NumPy kernels, PyTorch (if installed), NumPy.

Prints one table; asserts nothing. Run: ``python bench/ops.py`` (``--repeat N`` for more runs per row).
Each time is the best of ``repeat`` calls, all columns measured in the same run, row by row
(the machine's load changes less between them). ``ow numpy`` is opweave with
``OPWEAVE_CPU_KERNELS=numpy`` (switched in-process); the ratios are opweave's default path over
PyTorch (the target is 1.2x, 1.5x for SDPA) and over the NumPy formula.
A row whose op is missing from the catalog is printed with a note instead of times.
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
    t = ow.tensor
    tx, tw, tb, tg, tlogits, ttarget = t(x), t(w), t(b), t(g), t(logits), t(target)
    timg, tfilt, tq, tk, tv, tsig = t(img), t(filt), t(q), t(k), t(v), t(sig)
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
    fn = torch.fft.rfft if name == "fft.rfft" else getattr(tf, name)
    return lambda: fn(*targs, **kwargs)


def kernel_path_switch():
    """``set_kernel_path(name)`` of the CPU device module, or None when it lacks one."""
    cpu = getattr(ow, "cpu", None)
    if cpu is None or not hasattr(cpu, "set_kernel_path"):
        return None
    print(f"cpu kernels: {cpu.kernel_paths()}")
    return cpu.set_kernel_path


def main(argv=None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = cases(rng)
    have_torch = torch_call(("softmax", (np.zeros(1, np.float32),), {"dim": 0})) is not None
    if not have_torch:
        print("PyTorch is not installed: its column is left out (pip install torch)")
    set_path = kernel_path_switch()
    header = f"{'op':<26}{'opweave ms':>11}{'ow numpy':>10}"
    if have_torch:
        header += f"{'torch ms':>10}"
    header += f"{'numpy ms':>10}"
    if have_torch:
        header += f"{'ow/torch':>9}{'owNP/torch':>11}"
    header += f"{'ow/numpy':>9}"
    print(header)
    for name, ow_fn, np_fn, spec in rows:
        t_np = best(np_fn, args.repeat)
        if ow_fn is None:
            print(f"{name:<26}{'(op missing)':>11}{'':>10}{'':>10}{t_np:>10.1f}")
            continue
        t_ow = best(ow_fn, args.repeat)
        t_ref = float("nan")
        if set_path is not None:
            set_path("numpy")
            try:
                t_ref = best(ow_fn, args.repeat)
            finally:
                set_path(None)
        line = f"{name:<26}{t_ow:>11.1f}{t_ref:>10.1f}"
        if have_torch:
            t_pt = best(torch_call(spec), args.repeat)
            line += f"{t_pt:>10.1f}"
        line += f"{t_np:>10.1f}"
        if have_torch:
            line += f"{t_ow / t_pt:>8.2f}x{t_ref / t_pt:>10.2f}x"
        line += f"{t_ow / t_np:>8.2f}x"
        print(line)


if __name__ == "__main__":
    main()

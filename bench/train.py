"""One training step (forward, backward, SGD) of an MLP 784-512-512-10 and of the digits CNN, batch 64.

Beside the same step in PyTorch (if installed) and in hand-written NumPy, measured in the same run.
Prints times in milliseconds (the fastest round and the median round; the libraries take turns round
by round) and the ratios (the median of each round's ratio), then the operator calls of one step as
each library's profiler records them; asserts nothing.
Run: ``python bench/train.py`` (``python bench/train.py cnn`` or ``mlp``: one model only).
Every library runs single-threaded (BLAS and PyTorch), so the ratios compare the same resources;
set ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` before running to change that.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS

import timeit  # noqa: E402

import numpy as np  # noqa: E402
import opweave  # noqa: E402
from opweave import nn  # noqa: E402

BATCH = 64


def round_ms(fns: dict, number: int = 10, repeat: int = 15) -> dict:
    """Per-round time per call in milliseconds of each closure, the closures taking turns round by round.

    Interleaving keeps the ratios fair on a machine whose load changes during the run: each round
    gives one paired ratio, and the median of those is the figure least moved by a busy moment.
    """
    times: dict = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(timeit.timeit(fn, number=number) / number * 1e3)
    return times


def op_counts(lib, step) -> tuple[int, int]:
    """(top-level operator calls, all recorded events) of one step, from ``lib``'s profiler."""
    step()
    with lib.profiler.profile() as prof:
        step()
    if lib is opweave:
        events = list(prof.events())
        return sum(1 for e in events if e.depth == 0), len(events)
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    return sum(1 for e in events if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")), len(events)


def mlp(module):
    """784-512-512-10 with ReLU, in ``module`` (opweave.nn or torch.nn)."""
    return module.Sequential(
        module.Linear(784, 512), module.ReLU(), module.Linear(512, 512), module.ReLU(), module.Linear(512, 10)
    )


def cnn(module):
    """The digits CNN of examples/train_digits.py."""
    return module.Sequential(
        module.Conv2d(1, 16, 3, padding=1),
        module.ReLU(),
        module.MaxPool2d(2),
        module.Flatten(),
        module.Linear(256, 64),
        module.ReLU(),
        module.Linear(64, 10),
    )


def framework_step(lib, model, x, y):
    """A closure doing one zero_grad/forward/backward/step with ``lib`` (opweave or torch)."""
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def numpy_mlp_step(params, x, y):
    """A closure doing the MLP step in NumPy (float32)."""
    bufs = [np.zeros_like(p) for p in params]

    def step():
        w1, b1, w2, b2, w3, b3 = params
        z1 = x @ w1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3.T + b3
        e = np.exp(logits - logits.max(1, keepdims=True))
        d3 = e / e.sum(1, keepdims=True)
        d3[np.arange(len(y)), y] -= 1
        d3 /= len(y)
        d2 = (d3 @ w3) * (z2 > 0)
        d1 = (d2 @ w2) * (z1 > 0)
        grads = [d1.T @ x, d1.sum(0), d2.T @ h1, d2.sum(0), d3.T @ h2, d3.sum(0)]
        for p, b, g in zip(params, bufs, grads):
            b *= 0.9
            b += g
            p -= 0.01 * b

    return step


def numpy_cnn_step(params, x, y):
    """A closure doing the digits-CNN step in NumPy (float32, im2col convolution)."""
    bufs = [np.zeros_like(p) for p in params]
    b = x.shape[0]

    def step():
        wc, bc, w1, b1, w2, b2 = params
        xp = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
        cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2)).reshape(b, 64, 9)
        conv = (cols @ wc.reshape(16, 9).T + bc).transpose(0, 2, 1).reshape(b, 16, 8, 8)
        act = np.maximum(conv, 0)
        win = act.reshape(b, 16, 4, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, 16, 4, 4, 4)
        arg = win.argmax(-1)
        flat = np.take_along_axis(win, arg[..., None], -1).reshape(b, 256)
        z1 = flat @ w1.T + b1
        h1 = np.maximum(z1, 0)
        logits = h1 @ w2.T + b2
        e = np.exp(logits - logits.max(1, keepdims=True))
        d2 = e / e.sum(1, keepdims=True)
        d2[np.arange(b), y] -= 1
        d2 /= b
        d1 = (d2 @ w2) * (z1 > 0)
        dwin = np.zeros_like(win)
        np.put_along_axis(dwin, arg[..., None], (d1 @ w1).reshape(b, 16, 4, 4, 1), -1)
        dact = dwin.reshape(b, 16, 4, 4, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, 16, 8, 8)
        dconv = (dact * (conv > 0)).reshape(b, 16, 64)
        grads = [np.einsum("bcp,bpk->ck", dconv, cols).reshape(wc.shape), dconv.sum((0, 2)), d1.T @ flat, d1.sum(0)]
        grads += [d2.T @ h1, d2.sum(0)]
        for p, buf, g in zip(params, bufs, grads):
            buf *= 0.9
            buf += g
            p -= 0.01 * buf

    return step


def _cell(times) -> str:
    return f"{times.min():>9.2f}{np.median(times):>9.2f}"


def main(only: str = "") -> None:
    """Measure and print the table (``only``: a word of the one model to run, ``mlp`` or ``cnn``)."""
    rng = np.random.default_rng(0)
    cases = {
        "MLP 784-512-512-10": (mlp, rng.standard_normal((BATCH, 784), dtype=np.float32), numpy_mlp_step),
        "digits CNN": (cnn, rng.standard_normal((BATCH, 1, 8, 8), dtype=np.float32), numpy_cnn_step),
    }
    labels = rng.integers(0, 10, BATCH)
    try:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    except ImportError:
        torch = None
        print("PyTorch is not installed: its column is left out")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) at start: {load:.2f}")
    print("best: the fastest round; median: of the rounds (the ratios are medians of each round's ratio)")
    header = f"{'step (batch 64)':<22}{'opweave ms':>18}{'numpy ms':>18}{'ow/np':>7}"
    if torch:
        header += f"{'torch ms':>18}{'ow/torch':>9}"
    print(header)
    print(f"{'':<22}" + f"{'best  median':>18}" * 2 + " " * 7 + (f"{'best  median':>18}" if torch else ""))
    counts = []
    for name, (make, x, numpy_step) in cases.items():
        if only and only not in name.lower():
            continue
        model = make(nn)
        params = [p.detach().numpy().copy() for p in model.parameters()]
        steps = {
            "opweave": framework_step(opweave, model, opweave.tensor(x), opweave.tensor(labels)),
            "numpy": numpy_step(params, x, labels),
        }
        if torch:
            steps["torch"] = framework_step(torch, make(torch.nn), torch.tensor(x), torch.tensor(labels))
        t = {k: np.array(v) for k, v in round_ms(steps).items()}

        line = f"{name:<22}{_cell(t['opweave'])}{_cell(t['numpy'])}{np.median(t['opweave'] / t['numpy']):>6.1f}x"
        if torch:
            line += f"{_cell(t['torch'])}{np.median(t['opweave'] / t['torch']):>8.2f}x"
        print(line)
        ow_ops = op_counts(opweave, steps["opweave"])
        pt_ops = op_counts(torch, steps["torch"]) if torch else None
        counts.append((name, ow_ops, pt_ops))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) at end: {load:.2f}")
    print("\noperator calls per step: top-level (all, nested included)")
    for name, ow_ops, pt_ops in counts:
        line = f"{name:<22} opweave {ow_ops[0]:>4} ({ow_ops[1]:>4})"
        if pt_ops:
            line += f"   torch aten {pt_ops[0]:>4} ({pt_ops[1]:>4})"
        print(line)


if __name__ == "__main__":
    import sys

    main(sys.argv[1].lower() if len(sys.argv) > 1 else "")

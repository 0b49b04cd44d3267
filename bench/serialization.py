"""Save and load a 1 GiB state_dict (64 float32 tensors of 16 MiB) with opweave, PyTorch, safetensors and NumPy.

Prints seconds (best of ``--repeat`` runs; every file is written first, synced, then
read in rounds over all readers; files in a temporary directory, the page cache
warm) and opweave's ratio to ``torch.save`` / ``torch.load`` (plain and
``mmap=True``); asserts nothing. A mapped load maps the file and reads nothing, so
"+ read" rows also touch every page once. PyTorch and safetensors rows are skipped
when those packages are missing. Run::

    python bench/serialization.py [--tensors 64] [--mib 16] [--repeat 2]
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import tempfile
import time

import numpy as np
import opweave as ow


def best(fn, repeat: int) -> float:
    """Best wall time of ``fn()`` over ``repeat`` runs (its result dropped before the next)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        del result
    return min(times)


def touch_ow(sd) -> float:
    """Read every byte of an opweave state_dict (what a mapped load defers)."""
    return sum(float(t.numpy()[::1024].sum()) for t in sd.values())


def touch_np(sd) -> float:
    """Read every byte of a dict of arrays or torch tensors."""
    return sum(float(np.asarray(t)[::1024].sum()) for t in sd.values())


def main() -> None:
    """Build the state_dict once, then time every writer and reader."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=64)
    parser.add_argument("--mib", type=int, default=16, help="MiB per tensor")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    n = args.mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    arrays = collections.OrderedDict(
        (f"layer{i}.weight", rng.standard_normal(n, np.float32)) for i in range(args.tensors)
    )
    total = args.tensors * args.mib / 1024
    sd = collections.OrderedDict((k, ow.from_numpy(a)) for k, a in arrays.items())
    try:
        import torch

        tsd = collections.OrderedDict((k, torch.from_numpy(a)) for k, a in arrays.items())  # the same memory
    except ImportError:
        torch = None
        print("PyTorch is not installed: its rows are skipped")
    try:
        import safetensors.numpy
    except ImportError:
        safetensors = None
        print("safetensors is not installed: its rows are skipped")

    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def path(name: str) -> str:
            return os.path.join(tmp, name)

        def report(label):
            print(f"{label:<44}{rows[label]:>8.3f} s{total / rows[label]:>8.2f} GiB/s", flush=True)

        savers = {"opweave.save": lambda: ow.save(sd, path("ow.pt"))}
        loaders = {
            "opweave.load": lambda: ow.load(path("ow.pt")),
            "opweave.load(mmap=True)": lambda: ow.load(path("ow.pt"), mmap=True),
            "opweave.load(mmap=True) + read": lambda: touch_ow(ow.load(path("ow.pt"), mmap=True)),
        }
        if torch is not None:
            savers["torch.save"] = lambda: torch.save(tsd, path("torch.pt"))
            loaders["torch.load(weights_only=True)"] = lambda: torch.load(path("torch.pt"), weights_only=True)
            loaders["torch.load(mmap=True)"] = lambda: torch.load(path("torch.pt"), mmap=True, weights_only=True)
            loaders["torch.load(mmap=True) + read"] = lambda: touch_np(
                torch.load(path("torch.pt"), mmap=True, weights_only=True)
            )
            loaders["opweave.load of torch.save's file"] = lambda: ow.load(path("torch.pt"))
        if safetensors is not None:
            savers["opweave.safetensors.save_file"] = lambda: ow.safetensors.save_file(sd, path("ow.st"))
            loaders["opweave.safetensors.load_file"] = lambda: ow.safetensors.load_file(path("ow.st"))
            loaders["safetensors.numpy.load_file"] = lambda: safetensors.numpy.load_file(path("ow.st"))
            if torch is not None:
                import safetensors.torch

                loaders["safetensors.torch.load_file (lazy)"] = lambda: safetensors.torch.load_file(path("ow.st"))
        savers["numpy.savez"] = lambda: np.savez(path("np.npz"), **arrays)
        loaders["numpy.load (all arrays)"] = lambda: dict(np.load(path("np.npz")))

        print(f"state_dict: {args.tensors} float32 tensors x {args.mib} MiB = {total:.2f} GiB")
        for label, fn in savers.items():
            rows[label] = best(fn, args.repeat)
            report(label)
        os.sync()  # written back before anything is read, so no load competes with the writeback of a save
        for _ in range(args.repeat):  # rounds over all readers, so that load on the machine hits them alike
            for label, fn in loaders.items():
                rows[label] = min(rows.get(label, float("inf")), best(fn, 1))
        for label in loaders:
            report(label)

    if torch is not None:
        print()
        for ours, theirs in (
            ("opweave.save", "torch.save"),
            ("opweave.load", "torch.load(weights_only=True)"),
            ("opweave.load(mmap=True)", "torch.load(mmap=True)"),
            ("opweave.load(mmap=True) + read", "torch.load(mmap=True) + read"),
        ):
            print(f"{ours:<34} / {theirs:<32}{rows[ours] / rows[theirs]:>6.2f}x")
    ratio = rows["opweave.load"] / rows["numpy.load (all arrays)"]
    print(f"{'opweave.load':<34} / {'numpy.load (all arrays)':<32}{ratio:>6.2f}x")


if __name__ == "__main__":
    main()

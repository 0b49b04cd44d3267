"""The CUDA backend's host cost per op on tiny tensors, without a GPU: the real runtime over a driver that does nothing.

``opweave_cuda`` runs unchanged (``CudaRuntime``, the pool allocator, streams, kernel-parameter packing, the
generator's kernels, the dispatcher) over a stand-in for ``cuda.bindings.driver`` whose functions return at once
(an H100's attributes, fake device pointers, launches counted), and NVRTC is not called (the modules are empty).
What it measures is therefore opweave's own Python per call, **excluding the driver's** (a real ``cuLaunchKernel``
through cuda-bindings adds about 2-4 µs, a real ``cuMemAllocAsync`` about 1 µs); ``waits`` counts the host's waits
for the device per call (each a round trip to the GPU, several µs on a real one). PyTorch's CPU eager and NumPy on
the same 4×4 float32 inputs are printed beside it as a scale (PyTorch's CUDA eager cost is what the issue judges,
about 5-8 µs per op on an H100 host, which only ``bench/cuda.py`` on a GPU measures).

Run: ``python bench/cuda_host.py [--calls N] [--profile OP]`` (``--profile add`` prints cProfile's top entries of
``OP``'s calls, sorted by ``$SORT``, default ``tottime``; ``$TOP`` entries). Asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]  # bench/cuda.py would hide `cuda`

ROUNDS = 5


BASKET: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("add", lambda m, a, b: a + b),
    ("mul", lambda m, a, b: a * b),
    ("sub scalar", lambda m, a, b: a - 2.0),
    ("relu", lambda m, a, b: m.relu(a) if m is not None else a.clip(0)),
    ("exp", lambda m, a, b: m.exp(a)),
    ("sum", lambda m, a, b: a.sum()),
    ("amax dim", lambda m, a, b: m.amax(a, 1)),
    ("a[1:3]", lambda m, a, b: a[1:3]),
    ("clone", lambda m, a, b: a.clone()),
    ("view+add_", lambda m, a, b: a.view(16).add_(1.0)),
]


def per_call(fn: Callable[[], Any], calls: int) -> float:
    """Best over :data:`ROUNDS` of seconds per call of ``fn`` (after a warm-up)."""
    for _ in range(50):
        fn()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> int:
    """Print the table (and a profile with ``--profile``); 0 also when there is nothing to measure."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=5000, help="calls per round (default 5000)")
    parser.add_argument("--profile", metavar="OP", help="cProfile the calls of OP (a basket name) and print the top")
    args = parser.parse_args()
    try:
        from opweave_cuda._null_driver import install
    except ImportError as exc:
        print(f"bench/cuda_host.py: nothing to measure: opweave_cuda is missing ({exc}): pip install 'opweave[cuda]'")
        return 0
    null = install()
    if isinstance(null, str):
        print(f"bench/cuda_host.py: nothing to measure: {null}")
        return 0
    import numpy as np
    import opweave as ow

    if not ow.cuda.is_available():
        print(f"bench/cuda_host.py: the null driver did not make a device: {ow.cuda.unavailable_reason()}")
        return 0
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: no PyTorch CPU column")
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    a, b = ow.tensor(a_np, device="cuda"), ow.tensor(b_np, device="cuda")
    a_t, b_t = (torch.from_numpy(x.copy()) for x in (a_np, b_np)) if torch else (None, None)
    basket = dict(BASKET)
    if args.profile:
        op = basket[args.profile]
        per_call(lambda: op(ow, a, b), 200)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.calls):
            op(ow, a, b)
        profiler.disable()
        stats = pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "tottime"))
        stats.print_stats(int(os.environ.get("TOP", "25")))
        return 0
    print(f"{'op':<12}{'opweave cuda':>14}{'launches':>10}{'waits':>7}{'torch cpu':>11}{'numpy':>8}   (µs per call)")
    for name, op in BASKET:
        before, waited = null.launches, null.waits
        op(ow, a, b)
        launches, waits = null.launches - before, null.waits - waited
        ours = per_call(lambda op=op: op(ow, a, b), args.calls)
        theirs = per_call(lambda op=op: op(torch, a_t, b_t), args.calls) if torch else None
        try:
            module = None if name == "relu" else np
            numpy = per_call(lambda op=op, m=module: op(m, a_np, b_np), args.calls)
        except (AttributeError, TypeError):  # clone, view+add_: no NumPy spelling
            numpy = None
        torch_text = f"{theirs * 1e6:>11.2f}" if theirs else f"{'-':>11}"
        numpy_text = f"{numpy * 1e6:>8.2f}" if numpy else f"{'-':>8}"
        print(f"{name:<12}{ours * 1e6:>14.2f}{launches:>10}{waits:>7}{torch_text}{numpy_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

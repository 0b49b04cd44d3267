"""The multi-process section: checks a backend's ``c10d::`` collectives across ranks.

``opweave conformance --backend NAME --distributed N`` launches this module on N
ranks (``opweave run``). Every rank builds every rank's input from a seed, runs each
``c10d::`` op on ``NAME`` tensors, and compares with a NumPy oracle; rank 0 prints
one line per op (checks, failures) and the run fails if any check failed. A backend
without kernels of its own runs the ops staged through host memory, so this checks
its copies too; one with its own transport (NCCL) is checked the same way.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import traceback
from collections import defaultdict

import numpy as np

#: dtypes checked (those the backend supports), and the reductions per kind of dtype
DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool", "complex64")
REDUCTIONS = {
    "float": ("sum", "avg", "product", "min", "max"),
    "int": ("sum", "product", "min", "max", "band", "bor", "bxor"),
    "bool": ("sum", "product", "min", "max", "band", "bor", "bxor"),
    "complex": ("sum", "avg"),
}


class Checker:
    """Runs the checks of one rank and keeps per-op counts and failure messages."""

    def __init__(self, backend: str, seed: int):
        import opweave as ow
        import opweave.distributed as dist

        self.ow, self.dist, self.backend, self.seed = ow, dist, backend, seed
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.counts: dict[str, int] = defaultdict(int)
        self.failures: dict[str, list[str]] = defaultdict(list)
        supported = ow.backends.get(backend).dtypes
        self.dtypes = [getattr(ow, d) for d in DTYPES if supported is None or getattr(ow, d) in supported]

    # -- helpers --------------------------------------------------------------------------------

    def check(self, op: str, fn, *args) -> None:
        """Run one check of ``c10d::op``; a failure is recorded, not raised (the ranks stay in step)."""
        self.counts[op] += 1
        try:
            fn(*args)
        except Exception:
            self.failures[op].append(f"[rank {self.rank}] {args}: {traceback.format_exc(limit=3)}")

    def values(self, dtype, shape, rank: int, salt: int) -> np.ndarray:
        """Rank ``rank``'s input (the same on every rank that builds it)."""
        rng = np.random.default_rng([self.seed, rank, salt, sum(map(ord, str(dtype)))])
        if dtype == self.ow.bool:
            return rng.random(shape) < 0.5
        if dtype.is_complex:
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype.numpy)
        if dtype.is_floating_point:
            return (rng.standard_normal(shape) * 3).astype(dtype.numpy)
        return rng.integers(0 if dtype == self.ow.uint8 else -3, 4, shape).astype(dtype.numpy)

    def on_device(self, array: np.ndarray):
        return self.ow.tensor(array, device=self.backend)

    def host(self, t) -> np.ndarray:
        assert t.device.type == self.backend, f"result on {t.device}, expected {self.backend}"
        return t.cpu().numpy()

    def kind(self, dtype) -> str:
        if dtype == self.ow.bool:
            return "bool"
        if dtype.is_complex:
            return "complex"
        return "float" if dtype.is_floating_point else "int"

    def oracle(self, op: str, data: np.ndarray, dtype) -> np.ndarray:
        """NumPy's reduction over ranks (axis 0); floating types in float64/complex128, rounded to ``dtype``."""
        if dtype == self.ow.bool:
            if op == "bxor":
                return np.bitwise_xor.reduce(data, axis=0)
            return data.any(0) if op in ("sum", "max", "bor") else data.all(0)
        kind = self.kind(dtype)
        wide = data.astype(np.complex128 if kind == "complex" else np.float64) if kind != "int" else data
        out = {
            "sum": lambda: wide.sum(0, dtype=wide.dtype),
            "avg": lambda: wide.sum(0) / self.n,
            "product": lambda: wide.prod(0, dtype=wide.dtype),
            "min": lambda: wide.min(0),
            "max": lambda: wide.max(0),
            "band": lambda: np.bitwise_and.reduce(data, axis=0),
            "bor": lambda: np.bitwise_or.reduce(data, axis=0),
            "bxor": lambda: np.bitwise_xor.reduce(data, axis=0),
        }[op]()
        return out

    def close(self, got: np.ndarray, want: np.ndarray, dtype) -> None:
        """Equal for integers and bool; within the rounding of a reduction of n values otherwise."""
        if self.kind(dtype) in ("int", "bool"):
            np.testing.assert_array_equal(got, want)
            return
        eps = float(self.ow.finfo(dtype).eps) if dtype.is_floating_point else float(np.finfo(dtype.numpy).eps)
        wide = np.complex128 if dtype.is_complex else np.float64
        tol = (self.n + 1) * eps
        np.testing.assert_allclose(got.astype(wide), want, rtol=tol, atol=tol * 16)

    # -- the checks ------------------------------------------------------------------------------

    def all_reduce(self, dtype, op: str, inplace: bool) -> None:
        data = np.stack([self.values(dtype, (3, 4), r, 1) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        if inplace:
            y = self.ow.ops.c10d.all_reduce_(x, op, "0")
            assert y is x, "all_reduce_ returns its input"
        else:
            y = self.ow.ops.c10d.all_reduce(x, op, "0")
            np.testing.assert_array_equal(self.host(x), data[self.rank])  # the input is untouched
        assert y.dtype == dtype and tuple(y.shape) == (3, 4)
        self.close(self.host(y), self.oracle(op, data, dtype), dtype)

    def rejects(self) -> None:
        ow = self.ow
        x = self.on_device(np.arange(4, dtype=np.float32))
        for call, error in [
            (lambda: ow.ops.c10d.all_reduce(x, "median", "0"), ValueError),
            (lambda: ow.ops.c10d.all_reduce(x, "band", "0"), TypeError),
            (lambda: ow.ops.c10d.all_gather_into_tensor(x, self.n + 1, "0"), ValueError),
            (lambda: ow.ops.c10d.broadcast(x, self.n, "0"), ValueError),
        ]:
            try:
                call()
            except error:
                pass
            else:
                raise AssertionError(f"no {error.__name__}")
        np.testing.assert_array_equal(self.host(x), np.arange(4, dtype=np.float32))

    def all_gather(self, dtype, out: bool) -> None:
        data = np.stack([self.values(dtype, (2, 3), r, 2) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        if out:
            target = self.ow.empty((2 * self.n, 3), dtype=dtype, device=self.backend)
            y = self.ow.ops.c10d.all_gather_into_tensor_out(x, self.n, "0", out=target)
            assert y is target
        else:
            y = self.ow.ops.c10d.all_gather_into_tensor(x, self.n, "0")
        np.testing.assert_array_equal(self.host(y), np.concatenate(list(data)))

    def reduce_scatter(self, dtype, op: str, out: bool) -> None:
        data = np.stack([self.values(dtype, (2 * self.n, 3), r, 3) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        if out:
            target = self.ow.empty((2, 3), dtype=dtype, device=self.backend)
            y = self.ow.ops.c10d.reduce_scatter_tensor_out(x, op, self.n, "0", out=target)
            assert y is target
        else:
            y = self.ow.ops.c10d.reduce_scatter_tensor(x, op, self.n, "0")
        want = self.oracle(op, data, dtype)[2 * self.rank : 2 * self.rank + 2]
        self.close(self.host(y), want, dtype)

    def all_to_all(self, dtype, uneven: bool) -> None:
        n, rank = self.n, self.rank
        rows = (lambda s, d: (s + 2 * d) % 3) if uneven else (lambda s, d: 2)
        blocks = {(s, d): self.values(dtype, (rows(s, d), 2), s, 10 + d) for s in range(n) for d in range(n)}
        x = self.on_device(np.concatenate([blocks[(rank, d)] for d in range(n)]))
        outs = [rows(s, rank) for s in range(n)] if uneven else []
        ins = [rows(rank, d) for d in range(n)] if uneven else []
        y = self.ow.ops.c10d.all_to_all_single(x, outs, ins, "0")
        np.testing.assert_array_equal(self.host(y), np.concatenate([blocks[(s, rank)] for s in range(n)]))

    def broadcast(self, dtype, inplace: bool) -> None:
        src = self.n - 1
        data = np.stack([self.values(dtype, (5,), r, 4) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        y = self.ow.ops.c10d.broadcast_(x, src, "0") if inplace else self.ow.ops.c10d.broadcast(x, src, "0")
        np.testing.assert_array_equal(self.host(y), data[src])

    def reduce(self, dtype) -> None:
        dst = 1 % self.n
        data = np.stack([self.values(dtype, (4,), r, 5) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        self.ow.ops.c10d.reduce_(x, dst, "max", "0")
        want = self.oracle("max", data, dtype) if self.rank == dst else data[self.rank]
        self.close(self.host(x), want, dtype)

    def gather_scatter(self, dtype) -> None:
        n, rank, ow = self.n, self.rank, self.ow
        data = np.stack([self.values(dtype, (2,), r, 6) for r in range(n)])
        out = ow.empty((2 * n,) if rank == 0 else (0,), dtype=dtype, device=self.backend)
        ow.ops.c10d.gather_(self.on_device(data[rank]), out, 0, "0")
        if rank == 0:
            np.testing.assert_array_equal(self.host(out), data.reshape(-1))
        mine = ow.empty((2,), dtype=dtype, device=self.backend)
        source = self.on_device(data.reshape(-1)) if rank == n - 1 else ow.empty((0,), dtype=dtype, device=self.backend)
        ow.ops.c10d.scatter_(mine, source, n - 1, "0")
        np.testing.assert_array_equal(self.host(mine), data[rank])

    def send_recv(self, dtype) -> None:
        n, rank, ow = self.n, self.rank, self.ow
        right, left = (rank + 1) % n, (rank - 1) % n
        got = ow.empty((3,), dtype=dtype, device=self.backend)
        mine = self.on_device(self.values(dtype, (3,), rank, 7))
        if rank % 2 == 0:
            ow.ops.c10d.send(mine, right, 0, "0")
            ow.ops.c10d.recv_(got, left, 0, "0")
        else:
            ow.ops.c10d.recv_(got, left, 0, "0")
            ow.ops.c10d.send(mine, right, 0, "0")
        np.testing.assert_array_equal(self.host(got), self.values(dtype, (3,), left, 7))

    def async_wait(self) -> None:
        data = np.stack([self.values(self.ow.float32, (6,), r, 8) for r in range(self.n)])
        x = self.on_device(data[self.rank])
        work = self.dist.all_reduce(x, async_op=True)
        self.ow.ops.c10d.wait_tensor(x)
        work.wait()
        self.close(self.host(x), data.astype(np.float64).sum(0), self.ow.float32)

    def run(self) -> None:
        """Every check, in the same order on every rank."""
        for dtype in self.dtypes:
            for op in REDUCTIONS[self.kind(dtype)]:
                self.check("all_reduce", self.all_reduce, dtype, op, False)
                self.check("all_reduce_", self.all_reduce, dtype, op, True)
            self.check("all_gather_into_tensor", self.all_gather, dtype, False)
            self.check("all_gather_into_tensor_out", self.all_gather, dtype, True)
            op = "sum" if self.kind(dtype) != "bool" else "bor"
            self.check("reduce_scatter_tensor", self.reduce_scatter, dtype, op, False)
            self.check("reduce_scatter_tensor_out", self.reduce_scatter, dtype, op, True)
            self.check("all_to_all_single", self.all_to_all, dtype, False)
            self.check("all_to_all_single", self.all_to_all, dtype, True)
            self.check("broadcast", self.broadcast, dtype, False)
            self.check("broadcast_", self.broadcast, dtype, True)
            if self.kind(dtype) != "complex":
                self.check("reduce_", self.reduce, dtype)
            self.check("gather_/scatter_", self.gather_scatter, dtype)
            self.check("send/recv_", self.send_recv, dtype)
        self.check("wait_tensor", self.async_wait)
        self.check("errors", self.rejects)


def report(checker: Checker) -> bool:
    """Gather every rank's results on rank 0, print the table there; whether every check passed."""
    everyone = [None] * checker.n
    checker.dist.all_gather_object(everyone, dict(checker.failures))
    failures: dict[str, list[str]] = defaultdict(list)
    for per_rank in everyone:
        for op, messages in per_rank.items():
            failures[op].extend(messages)
    if checker.rank == 0:
        print(f"conformance of c10d:: collectives on {checker.backend}, {checker.n} ranks (seed {checker.seed})")
        print(f"{'op':<34} {'checks':>7} {'failed':>7}")
        for op, count in checker.counts.items():
            status = "FAIL" if failures.get(op) else "pass"
            print(f"c10d::{op:<28} {count * checker.n:>7} {len(failures.get(op, ())):>7}  {status}")
        for op, messages in failures.items():
            for message in messages[:3]:
                print(f"\n--- c10d::{op} {message}")
        total = sum(checker.counts.values()) * checker.n
        bad = sum(len(m) for m in failures.values())
        print(f"\n{total - bad} passed, {bad} failed")
    return not failures


def job(argv=None) -> int:
    """What each rank runs: ``python -m opweave_conformance.distributed --backend NAME``."""
    parser = argparse.ArgumentParser(prog="python -m opweave_conformance.distributed")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import opweave.distributed as dist

    dist.init_process_group("mpi", timeout=datetime.timedelta(minutes=5))
    checker = Checker(args.backend, args.seed)
    checker.run()
    ok = report(checker)
    rank = checker.rank
    dist.destroy_process_group()
    return 0 if ok or rank != 0 else 1  # rank 0 has printed the failures; its exit status ends the job


def launch(backend: str, ranks: int, seed: int = 0) -> int:
    """Run the section on ``ranks`` ranks (what ``opweave conformance --distributed N`` does)."""
    from opweave.distributed import run

    if ranks < 2:
        raise ValueError(f"--distributed needs at least 2 ranks, got {ranks}")
    target = ["-m", "opweave_conformance.distributed", "--backend", backend, "--seed", str(seed)]
    return run.launch(ranks, target)


if __name__ == "__main__":
    sys.exit(job())

"""One multi-process job that checks every collective against NumPy oracles (run by test_distributed.py).

Usage: ``opweave run -n N _job_collectives.py SEED``. Every rank builds every rank's
input from (SEED, rank), so each rank computes the expected result itself with
NumPy. Failed checks are collected, not raised (so the ranks stay in step);
rank 0 prints them all and exits 1, or prints ``OK <count> checks``.
"""

from __future__ import annotations

import datetime
import sys
import traceback

import numpy as np
import opweave as ow
import opweave.distributed as dist
from opweave.distributed import ReduceOp

SEED = int(sys.argv[1])
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=120))
RANK, N = dist.get_rank(), dist.get_world_size()
FAILURES: list[str] = []
COUNT = [0]

FLOATS = [ow.float32, ow.float64, ow.float16, ow.bfloat16]
INTS = [ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64]
COMPLEX = [ow.complex64, ow.complex128]
FLOAT8 = [ow.float8_e4m3fn, ow.float8_e5m2]
EVERY = FLOATS + INTS + COMPLEX + [ow.bool] + FLOAT8  # data movement: every dtype
SHAPES = [(), (0,), (5,), (3, 4)]


def check(name, fn, *args):
    """Run one check; record a failure with its traceback instead of raising."""
    COUNT[0] += 1
    try:
        fn(*args)
    except Exception:
        FAILURES.append(f"[rank {RANK}] {name} {args}: {traceback.format_exc()}")


def np_dtype(dtype):
    return np.dtype(dtype.numpy)


def values(dtype, shape, rank, salt=0, special=False):
    """Rank ``rank``'s input: the same on every rank that asks (seeded by SEED, rank and salt)."""
    rng = np.random.default_rng([SEED, rank, salt, sum(map(ord, str(dtype)))])
    if dtype == ow.bool:
        return rng.random(shape) < 0.5
    if dtype.is_complex:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np_dtype(dtype))
    if dtype.is_floating_point:
        x = rng.standard_normal(shape) * 4
        if special and x.size >= 5:
            flat = x.reshape(-1)
            flat[rng.integers(0, x.size)] = [np.nan, np.inf, -np.inf, -0.0][rank % 4]
        return x.astype(np_dtype(dtype))
    lo, hi = (0, 4) if dtype == ow.uint8 else (-3, 4)
    return rng.integers(lo, hi, shape).astype(np_dtype(dtype))


def stack(dtype, shape, salt=0, special=False):
    return np.stack([values(dtype, shape, r, salt, special) for r in range(N)])


def tensor_of(array, transposed=False):
    """An opweave CPU tensor holding ``array``; ``transposed``: as a non-contiguous view with those values."""
    if transposed and array.ndim == 2:
        base = ow.tensor(np.ascontiguousarray(array.T))
        view = base.mT
        assert not view.is_contiguous()
        return view
    return ow.tensor(np.array(array))


def as_numpy(t):
    return t.numpy() if t.is_contiguous() else t.contiguous().numpy()


def same_bytes(got, want):
    """Bit-identical (data movement: -0.0, NaN and float8 included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(
        np.ascontiguousarray(got).reshape(-1).view(np.uint8), np.ascontiguousarray(want).reshape(-1).view(np.uint8)
    )


def assert_close(got, want, dtype, n_terms=N):
    """Within the dtype's rounding for a reduction of ``n_terms`` values (summation order is MPI's)."""
    got64, want64 = np.asarray(got).astype(np.complex128 if dtype.is_complex else np.float64), np.asarray(want)
    if dtype.is_floating_point or dtype.is_complex:
        eps = {2: 2.0**-8 if dtype == ow.bfloat16 else 2.0**-11}.get(dtype.itemsize, None)
        if eps is None:
            eps = np.finfo(np_dtype(dtype)).eps if not dtype.is_complex else np.finfo(np_dtype(dtype)).eps
        np.testing.assert_allclose(
            got64, want64, rtol=(n_terms + 1) * eps, atol=(n_terms + 1) * eps * 64, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got64, want64)


# -- all_reduce --------------------------------------------------------------------------------


def oracle(op, data, dtype):
    """NumPy's reduction over ranks (axis 0), in float64/complex128 for floating types."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf is nan, as it should be
        return _oracle(op, data, dtype)


def _oracle(op, data, dtype):
    if dtype == ow.bool:
        table = {
            ReduceOp.SUM: np.any,
            ReduceOp.MAX: np.any,
            ReduceOp.BOR: np.any,
            ReduceOp.PRODUCT: np.all,
            ReduceOp.MIN: np.all,
            ReduceOp.BAND: np.all,
        }
        if op is ReduceOp.BXOR:
            return np.bitwise_xor.reduce(data, axis=0)
        return table[op](data, axis=0)
    wide = data if _is_integer(dtype) else data.astype(np.complex128 if dtype.is_complex else np.float64)
    if op is ReduceOp.SUM:
        return wide.sum(axis=0, dtype=wide.dtype)
    if op is ReduceOp.AVG:
        return wide.sum(axis=0) / N
    if op is ReduceOp.PRODUCT:
        return wide.prod(axis=0, dtype=wide.dtype)
    if op is ReduceOp.MIN:
        return wide.min(axis=0)
    if op is ReduceOp.MAX:
        return wide.max(axis=0)
    ufunc = {ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor}[op]
    return ufunc.reduce(data, axis=0)


def _is_integer(dtype):
    return not (dtype.is_floating_point or dtype.is_complex) and dtype != ow.bool


def check_all_reduce(dtype, op, shape, transposed):
    special = op is ReduceOp.SUM and dtype.is_floating_point
    data = stack(dtype, shape, 1, special)
    t = tensor_of(data[RANK], transposed)
    dist.all_reduce(t, op=op)
    want = oracle(op, data, dtype)
    got = as_numpy(t)
    assert got.dtype == np_dtype(dtype), got.dtype
    assert got.shape == tuple(shape)
    if dtype.itemsize == 2 and dtype.is_floating_point:  # reduced in float32, rounded once
        want = want.astype(np.float32).astype(np_dtype(dtype)).astype(np.float64)
        assert_close(got, want, dtype, 1)
    else:
        assert_close(got, want, dtype)


VALID = {
    "float": [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX],
    "int": [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR],
    "complex": [ReduceOp.SUM, ReduceOp.AVG],
    "bool": [op for op in ReduceOp if op is not ReduceOp.AVG],
}
for dtype in FLOATS + INTS + COMPLEX + [ow.bool]:
    kind = (
        "bool" if dtype == ow.bool else "complex" if dtype.is_complex else "float" if dtype.is_floating_point else "int"
    )
    for op in VALID[kind]:
        for shape in SHAPES:
            check("all_reduce", check_all_reduce, dtype, op, shape, False)
        check("all_reduce", check_all_reduce, dtype, op, (3, 4), True)


def check_all_reduce_rejects(dtype, op, error):
    data = values(dtype, (4,), RANK, 2)
    t = tensor_of(data)
    try:
        dist.all_reduce(t, op=op)
    except error as exc:
        assert "all_reduce" in str(exc), exc
    else:
        raise AssertionError(f"all_reduce({dtype}, {op}) did not raise {error.__name__}")
    np.testing.assert_array_equal(as_numpy(t), data)  # the input is left intact


for dtype, op, error in [
    (ow.float32, ReduceOp.BAND, TypeError),
    (ow.bfloat16, ReduceOp.BXOR, TypeError),
    (ow.int32, ReduceOp.AVG, TypeError),
    (ow.bool, ReduceOp.AVG, TypeError),
    (ow.complex64, ReduceOp.MAX, ValueError),
    (ow.complex128, ReduceOp.PRODUCT, ValueError),
    (ow.float8_e4m3fn, ReduceOp.SUM, TypeError),
]:
    check("all_reduce rejects", check_all_reduce_rejects, dtype, op, error)


# -- broadcast, reduce -------------------------------------------------------------------------


def check_broadcast(dtype, shape, transposed):
    src = N - 1
    t = tensor_of(values(dtype, shape, RANK, 3), transposed)
    dist.broadcast(t, src=src)
    same_bytes(as_numpy(t), values(dtype, shape, src, 3))


for dtype in EVERY:
    check("broadcast", check_broadcast, dtype, (3, 4), False)
check("broadcast", check_broadcast, ow.float32, (3, 4), True)
check("broadcast", check_broadcast, ow.int64, (), False)
check("broadcast", check_broadcast, ow.float32, (0,), False)


def check_reduce(dtype, op):
    dst = 1 % N
    data = stack(dtype, (6,), 4)
    t = tensor_of(data[RANK])
    dist.reduce(t, dst=dst, op=op)
    if RANK == dst:
        want = oracle(op, data, dtype)
        if dtype.itemsize == 2 and dtype.is_floating_point:
            want = want.astype(np.float32).astype(np_dtype(dtype)).astype(np.float64)
            assert_close(as_numpy(t), want, dtype, 1)
        else:
            assert_close(as_numpy(t), want, dtype)
    else:
        np.testing.assert_array_equal(as_numpy(t), data[RANK])


for dtype, op in [
    (ow.float32, ReduceOp.SUM),
    (ow.float64, ReduceOp.AVG),
    (ow.int32, ReduceOp.MAX),
    (ow.bfloat16, ReduceOp.SUM),
    (ow.bool, ReduceOp.PRODUCT),
]:
    check("reduce", check_reduce, dtype, op)


# -- gathers and scatters ----------------------------------------------------------------------


def check_all_gather(dtype, shape):
    data = stack(dtype, shape, 5)
    outs = [ow.empty(shape, dtype=dtype) for _ in range(N)]
    dist.all_gather(outs, tensor_of(data[RANK]))
    for r in range(N):
        same_bytes(outs[r].numpy(), data[r])


def check_all_gather_into_tensor(dtype, shape, stacked):
    data = stack(dtype, shape, 6)
    out_shape = (N, *shape) if stacked else ((N * shape[0], *shape[1:]) if shape else (N,))
    out = ow.empty(out_shape, dtype=dtype)
    dist.all_gather_into_tensor(out, tensor_of(data[RANK]))
    want = data if stacked else (np.concatenate(list(data)) if shape else data)
    same_bytes(out.numpy(), want.reshape(out_shape))


for dtype in EVERY:
    check("all_gather", check_all_gather, dtype, (2, 3))
    check("all_gather_into_tensor", check_all_gather_into_tensor, dtype, (2, 3), False)
check("all_gather", check_all_gather, ow.float32, ())
check("all_gather_into_tensor", check_all_gather_into_tensor, ow.float16, (2, 3), True)
check("all_gather_into_tensor", check_all_gather_into_tensor, ow.float32, (), False)


def check_reduce_scatter_tensor(dtype, op, stacked):
    rows = 2
    data = stack(dtype, (N * rows, 3), 7)
    source = tensor_of(data[RANK].reshape(N, rows, 3) if stacked else data[RANK])
    out = ow.empty((rows, 3), dtype=dtype)
    dist.reduce_scatter_tensor(out, source, op=op)
    want = oracle(op, data, dtype)[RANK * rows : (RANK + 1) * rows]
    if dtype.itemsize == 2 and dtype.is_floating_point:
        want = want.astype(np.float32).astype(np_dtype(dtype)).astype(np.float64)
        assert_close(out.numpy(), want, dtype, 1)
    else:
        assert_close(out.numpy(), want, dtype)


for dtype, op in [
    (ow.float32, ReduceOp.SUM),
    (ow.float64, ReduceOp.MAX),
    (ow.bfloat16, ReduceOp.AVG),
    (ow.int32, ReduceOp.BXOR),
    (ow.complex128, ReduceOp.SUM),
]:
    check("reduce_scatter_tensor", check_reduce_scatter_tensor, dtype, op, False)
check("reduce_scatter_tensor", check_reduce_scatter_tensor, ow.float32, ReduceOp.MIN, True)
for dtype in FLOATS + INTS + COMPLEX + [ow.bool]:
    check("reduce_scatter_tensor", check_reduce_scatter_tensor, dtype, ReduceOp.SUM, False)
    check("reduce", check_reduce, dtype, ReduceOp.SUM)


def check_reduce_scatter_list(dtype, op):
    data = np.stack([np.stack([values(dtype, (4,), r, 8 + j) for j in range(N)]) for r in range(N)])  # [src, dst, 4]
    out = ow.empty((4,), dtype=dtype)
    dist.reduce_scatter(out, [tensor_of(data[RANK, j]) for j in range(N)], op=op)
    assert_close(out.numpy(), oracle(op, data[:, RANK], dtype), dtype)


check("reduce_scatter", check_reduce_scatter_list, ow.float32, ReduceOp.SUM)
check("reduce_scatter", check_reduce_scatter_list, ow.int16, ReduceOp.PRODUCT)


def check_gather(dtype, dst):
    data = stack(dtype, (2, 2), 9)
    outs = [ow.empty((2, 2), dtype=dtype) for _ in range(N)] if RANK == dst else None
    dist.gather(tensor_of(data[RANK]), outs, dst=dst)
    if RANK == dst:
        for r in range(N):
            same_bytes(outs[r].numpy(), data[r])


def check_scatter(dtype, src):
    data = stack(dtype, (2, 2), 10)  # rank src's scatter_list is data[0..N-1]
    out = ow.zeros((2, 2), dtype=dtype)
    dist.scatter(out, [tensor_of(d) for d in data] if RANK == src else None, src=src)
    same_bytes(out.numpy(), data[RANK])


for dtype in EVERY:
    check("gather", check_gather, dtype, 0)
    check("gather", check_gather, dtype, N - 1)
    check("scatter", check_scatter, dtype, 0)
    check("scatter", check_scatter, dtype, N - 1)


def send_rows(src, dst):
    """How many rows rank ``src`` sends to rank ``dst`` in the uneven all-to-all."""
    return (src + 2 * dst) % 3


def check_all_to_all_single(dtype, uneven):
    if uneven:
        in_splits = [send_rows(RANK, j) for j in range(N)]
        out_splits = [send_rows(j, RANK) for j in range(N)]
    else:
        in_splits = out_splits = [2] * N
    blocks = {
        (s, d): values(dtype, ((send_rows(s, d) if uneven else 2), 3), s, 100 + d) for s in range(N) for d in range(N)
    }
    source = np.concatenate([blocks[(RANK, d)] for d in range(N)])
    out = ow.empty((sum(out_splits), 3), dtype=dtype)
    dist.all_to_all_single(out, tensor_of(source), out_splits if uneven else None, in_splits if uneven else None)
    same_bytes(out.numpy(), np.concatenate([blocks[(s, RANK)] for s in range(N)]))


for dtype in EVERY:
    check("all_to_all_single", check_all_to_all_single, dtype, False)
    check("all_to_all_single", check_all_to_all_single, dtype, True)


def check_all_to_all_list():
    blocks = {(s, d): values(ow.float32, (d + 1, 2), s, 200 + d) for s in range(N) for d in range(N)}
    outs = [ow.empty((RANK + 1, 2)) for _ in range(N)]
    dist.all_to_all(outs, [tensor_of(blocks[(RANK, d)]) for d in range(N)])
    for s in range(N):
        np.testing.assert_array_equal(outs[s].numpy(), blocks[(s, RANK)])


check("all_to_all", check_all_to_all_list)


# -- point to point ----------------------------------------------------------------------------


def check_ring(dtype):
    right, left = (RANK + 1) % N, (RANK - 1) % N
    mine = values(dtype, (3, 2), RANK, 11)
    got = ow.empty((3, 2), dtype=dtype)
    if RANK % 2 == 0:
        dist.send(tensor_of(mine), dst=right)
        sender = dist.recv(got, src=left)
    else:
        sender = dist.recv(got, src=left)
        dist.send(tensor_of(mine), dst=right)
    assert sender == left, sender
    same_bytes(got.numpy(), values(dtype, (3, 2), left, 11))


def check_isend_irecv_any_source():
    got = ow.empty((4,), dtype=ow.int64)
    work = dist.irecv(got)  # from any rank
    send = dist.isend(ow.full((4,), RANK, dtype=ow.int64), dst=(RANK + 1) % N)
    work.wait()
    send.wait()
    assert work.is_completed() and send.is_completed()
    assert work.source_rank() == (RANK - 1) % N
    np.testing.assert_array_equal(got.numpy(), np.full(4, (RANK - 1) % N))


def check_batch_isend_irecv():
    right, left = (RANK + 1) % N, (RANK - 1) % N
    got_left, got_right = ow.empty((2,)), ow.empty((2,))
    ops = [
        dist.P2POp(dist.isend, ow.full((2,), float(RANK)), right),
        dist.P2POp(dist.isend, ow.full((2,), float(RANK) + 0.5), left, tag=1),
        dist.P2POp(dist.irecv, got_left, left),
        dist.P2POp(dist.irecv, got_right, right, tag=1),
    ]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    np.testing.assert_array_equal(got_left.numpy(), [left, left])
    np.testing.assert_array_equal(got_right.numpy(), [right + 0.5, right + 0.5])


for dtype in EVERY:
    check("send/recv", check_ring, dtype)
check("isend/irecv", check_isend_irecv_any_source)
check("batch_isend_irecv", check_batch_isend_irecv)


# -- async work, functional ops, the profiler --------------------------------------------------


def check_async_all_reduce():
    data = stack(ow.float32, (8,), 12)
    t = tensor_of(data[RANK])
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True and work.is_completed()
    assert_close(t.numpy(), data.astype(np.float64).sum(0), ow.float32)
    u = tensor_of(data[RANK])
    dist.all_reduce(u, op=ReduceOp.MAX, async_op=True)
    ow.ops.c10d.wait_tensor(u)  # waits for the launched op that writes u
    np.testing.assert_array_equal(u.numpy(), data.max(0))


def check_wait_timeout():
    """Rank 0's wait times out while the others hold back; then they join and it completes."""
    t = ow.ones(4)
    go = ow.zeros(1)
    if RANK == 0:
        work = dist.all_reduce(t, async_op=True)
        try:
            work.wait(timeout=datetime.timedelta(milliseconds=100))
        except dist.DistBackendError as exc:
            assert "timed out" in str(exc), exc
        else:
            raise AssertionError("wait() returned while the other ranks had not joined")
        assert not work.is_completed()
        for r in range(1, N):
            dist.send(go, dst=r)
        work.wait()
    else:
        dist.recv(go, src=0)
        dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), np.full(4, float(N)))


def check_functional_ops():
    data = stack(ow.float32, (2 * N, 3), 13)
    x = tensor_of(data[RANK])
    y = ow.ops.c10d.all_reduce(x, "sum", "0")
    np.testing.assert_array_equal(x.numpy(), data[RANK])  # the functional op leaves its input alone
    assert_close(y.numpy(), data.astype(np.float64).sum(0), ow.float32)
    g = ow.ops.c10d.all_gather_into_tensor(x, N, "0")
    np.testing.assert_array_equal(g.numpy(), np.concatenate(list(data)))
    rs = ow.ops.c10d.reduce_scatter_tensor(x, "max", N, "0")
    np.testing.assert_array_equal(rs.numpy(), data.max(0)[2 * RANK : 2 * RANK + 2])
    b = ow.ops.c10d.broadcast(x, 0, "0")
    np.testing.assert_array_equal(b.numpy(), data[0])
    a2a = ow.ops.c10d.all_to_all_single(x, [], [], "0")
    want = np.concatenate([data[s][2 * RANK : 2 * RANK + 2] for s in range(N)])
    np.testing.assert_array_equal(a2a.numpy(), want)
    assert ow.ops.c10d.wait_tensor(y) is y


def check_profiler_sees_collectives():
    t = ow.ones(3)
    with ow.profiler.profile() as prof:
        dist.all_reduce(t)
        dist.broadcast(t, src=0)
    names = {e.name for e in prof.events()}
    assert {"c10d::all_reduce_", "c10d::broadcast_"} <= names, names


def check_op_errors():
    t = ow.ones(3)
    for call, error, words in [
        (lambda: ow.ops.c10d.all_reduce(t, "median", "0"), ValueError, "unknown reduce op"),
        (lambda: ow.ops.c10d.all_reduce(t, "sum", "no-such-group"), ValueError, "no process group"),
        (lambda: ow.ops.c10d.broadcast(t, N, "0"), ValueError, "src"),
        (lambda: ow.ops.c10d.all_gather_into_tensor(t, N + 1, "0"), ValueError, "group_size"),
        (lambda: dist.all_reduce([1, 2]), TypeError, "tensor"),
        (lambda: dist.all_reduce(t, op="sum"), TypeError, "ReduceOp"),
        (lambda: dist.reduce_scatter_tensor(ow.empty(2), ow.empty(2 * N + 1)), ValueError, "divisible"),
        (lambda: dist.all_gather_into_tensor(ow.empty(N), ow.empty(1, dtype=ow.int32)), TypeError, "dtype"),
        (lambda: dist.broadcast(t), ValueError, "src"),
        (lambda: dist.send(t, dst=RANK), ValueError, "rank"),
    ]:
        try:
            call()
        except error as exc:
            assert words in str(exc), (words, str(exc))
        else:
            raise AssertionError(f"no {error.__name__} ({words})")
    np.testing.assert_array_equal(t.numpy(), np.ones(3))


check("async all_reduce", check_async_all_reduce)
check("Work.wait timeout", check_wait_timeout)
check("functional c10d ops", check_functional_ops)
check("profiler", check_profiler_sees_collectives)
check("errors", check_op_errors)


# -- other devices (staged through host memory), groups, objects ---------------------------------


def check_staged_device(device):
    data = stack(ow.float32, (2, 3), 14)
    t = ow.tensor(data[RANK], device=device)
    dist.all_reduce(t)
    assert t.device.type == device
    assert_close(t.cpu().numpy(), data.astype(np.float64).sum(0), ow.float32)
    out = ow.empty((2 * N, 3), device=device)
    dist.all_gather_into_tensor(out, ow.tensor(data[RANK], device=device))
    np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate(list(data)))
    y = ow.ops.c10d.all_reduce(ow.tensor(data[RANK], device=device), "max", "0")
    assert y.device.type == device
    np.testing.assert_array_equal(y.cpu().numpy(), data.max(0))


for device in ("vnpu", "opencl"):
    try:
        ow.empty(1, device=device)
    except Exception:
        continue  # that backend is not installed here
    check(f"staged {device}", check_staged_device, device)


def check_new_group():
    members = [0, N - 1]
    group = dist.new_group(members)
    t = ow.full((3,), float(RANK + 1))
    result = dist.all_reduce(t, group=group)
    assert result is None
    if RANK in members:
        assert dist.get_world_size(group) == len(set(members))
        assert dist.get_rank(group) == members.index(RANK)
        np.testing.assert_array_equal(t.numpy(), np.full(3, float(sum(r + 1 for r in set(members)))))
        b = ow.full((2,), float(RANK))
        dist.broadcast(b, src=N - 1, group=group)  # a global rank
        np.testing.assert_array_equal(b.numpy(), [N - 1.0, N - 1.0])
        dist.destroy_process_group(group)
    else:
        assert group is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(group) == -1
        np.testing.assert_array_equal(t.numpy(), np.full(3, float(RANK + 1)))  # untouched


def check_objects():
    objects = [{"rank": RANK, "text": "x" * (RANK * 7)}, None, (RANK, 2.5)]
    box = list(objects) if RANK == N - 1 else [None, None, None]
    dist.broadcast_object_list(box, src=N - 1)
    assert box == [{"rank": N - 1, "text": "x" * ((N - 1) * 7)}, None, (N - 1, 2.5)], box
    everyone = [None] * N
    dist.all_gather_object(everyone, {"r": RANK, "pad": list(range(RANK))})
    assert everyone == [{"r": r, "pad": list(range(r))} for r in range(N)], everyone
    gathered = [None] * N if RANK == 0 else None
    dist.gather_object(f"rank{RANK}", gathered, dst=0)
    if RANK == 0:
        assert gathered == [f"rank{r}" for r in range(N)], gathered
    out = [None]
    dist.scatter_object_list(out, [[r] * r for r in range(N)] if RANK == 1 % N else None, src=1 % N)
    assert out == [[RANK] * RANK], out


def check_reducer():
    """DDP's gradient averaging: small buckets, gradients arriving in a different order on each rank."""
    from opweave.distributed._reducer import Reducer, sync_tensors

    shapes = [(3, 4), (5,), (2, 2, 2), (), (7,)]
    dtypes = [ow.float32, ow.float32, ow.float64, ow.float32, ow.bfloat16]
    params = [tensor_of(values(d, s, RANK, 300 + i)) for i, (s, d) in enumerate(zip(shapes, dtypes))]
    sync_tensors(params, src=N - 1)
    for i, (s, d) in enumerate(zip(shapes, dtypes)):
        np.testing.assert_array_equal(as_numpy(params[i]), values(d, s, N - 1, 300 + i))
    reducer = Reducer(params, bucket_cap_mb=40 / 2**20)  # 40 bytes: several buckets
    assert len(reducer.buckets) >= 4, len(reducer.buckets)
    for step in range(2):
        grads = {
            i: [values(d, s, r, 400 + 10 * step + i) for r in range(N)] for i, (s, d) in enumerate(zip(shapes, dtypes))
        }
        order = list(range(len(shapes)))
        np.random.default_rng([SEED, RANK, step]).shuffle(order)
        for i in order:
            reducer.mark_ready(i, tensor_of(grads[i][RANK]))
        averaged = reducer.finalize()
        for i, (s, d) in enumerate(zip(shapes, dtypes)):
            want = np.mean(np.stack(grads[i]).astype(np.float64), axis=0)
            assert tuple(averaged[i].shape) == s and averaged[i].dtype == d
            if d == ow.bfloat16:
                want = want.astype(np.float32).astype(np_dtype(d)).astype(np.float64)
                assert_close(as_numpy(averaged[i]), want, d, 1)
            else:
                assert_close(as_numpy(averaged[i]), want, d)
    try:
        reducer.finalize()
    except RuntimeError as exc:
        assert "received no gradient" in str(exc), exc
    else:
        raise AssertionError("finalize() without gradients did not raise")


class CountingHostEngine:
    """A device engine (what NCCL will be for CUDA) for vnpu tensors: all_reduce via host copies, counted."""

    def __init__(self, group):
        from opweave.distributed._mpi import MPIEngine

        self.host = MPIEngine(group.comm, group.timeout, RANK)
        self.rank, self.size, self.calls = self.host.rank, self.host.size, 0

    def all_reduce(self, tensor, op, async_op):
        self.calls += 1
        host = tensor.cpu()
        work = self.host.all_reduce(host, op, False)
        tensor.copy_(host)
        return work

    def close(self):
        pass


def check_device_engine():
    engines = []

    def factory(group):
        engines.append(CountingHostEngine(group))
        return engines[-1]

    dist.register_engine("vnpu", factory)
    data = stack(ow.float32, (4,), 15)
    t = ow.tensor(data[RANK], device="vnpu")
    why = str(ow.dispatch.explain(ow.ops.c10d.all_reduce_.default, t, "sum", "0"))
    assert "Dense×vnpu: kernel from opweave.distributed" in why, why
    dist.all_reduce(t, op=ReduceOp.MAX)
    np.testing.assert_array_equal(t.cpu().numpy(), data.max(0))
    assert len(engines) == 1 and engines[0].calls == 1


check("reducer", check_reducer)
if "vnpu" in {row.name for row in ow.backends.status() if row.available}:
    check("device engine", check_device_engine)
check("new_group", check_new_group)
check("objects", check_objects)
dist.barrier()

everyone = [None] * N
dist.all_gather_object(everyone, FAILURES)
failures = [f for rank_failures in everyone for f in rank_failures]
if RANK == 0:
    if failures:
        print(f"{len(failures)} of {COUNT[0] * N} checks failed (SEED={SEED}):")
        print("\n".join(failures))
    else:
        print(f"OK {COUNT[0]} checks on {N} ranks (SEED={SEED})")
dist.destroy_process_group()
sys.exit(1 if failures and RANK == 0 else 0)  # rank 0 has printed them

"""One multi-process job that checks DistributedDataParallel against NumPy (run by test_ddp.py).

Usage: ``opweave run -n N _job_ddp.py SEED``. The model is a two-layer tanh MLP in float64
with a mean-squared-error loss; its forward, backward, SGD and Adam are written out in
NumPy below, and every rank computes the whole batch's result itself. Each rank feeds DDP
its 1/N share of the batch. Failed checks are collected (the ranks stay in step); rank 0
prints them and exits 1, or prints ``OK <count> checks``.
"""

from __future__ import annotations

import datetime
import sys
import traceback

import numpy as np
import opweave as ow
import opweave.distributed as dist
from opweave import nn
from opweave.distributed.algorithms.ddp_comm_hooks import default_hooks
from opweave.futures import Future
from opweave.nn.parallel import DistributedDataParallel as DDP

SEED = int(sys.argv[1])
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=120))
RANK, N = dist.get_rank(), dist.get_world_size()
FAILURES: list[str] = []
COUNT = [0]
IN, HIDDEN, OUT, PER_RANK = 5, 7, 3, 3
TINY_BUCKETS = 100 / 2**20  # 100 bytes: several buckets for this model


def check(name, fn, *args):
    """Run one check; record a failure with its traceback instead of raising."""
    COUNT[0] += 1
    try:
        fn(*args)
    except Exception:
        FAILURES.append(f"[rank {RANK}] {name} {args}: {traceback.format_exc()}")


def rng(*salt):
    return np.random.default_rng([SEED, *salt])


def batch(step, salt=0):
    """The whole batch of a step (the same on every rank) and this rank's rows."""
    g = rng(1, step, salt)
    x, t = g.standard_normal((PER_RANK * N, IN)), g.standard_normal((PER_RANK * N, OUT))
    mine = slice(RANK * PER_RANK, (RANK + 1) * PER_RANK)
    return x, t, mine


def mlp(dtype=ow.float64, seed_rank=None):
    """Linear(IN, HIDDEN) → tanh → Linear(HIDDEN, OUT), initialised differently on each rank."""
    ow.manual_seed(SEED * 7 + (RANK if seed_rank is None else seed_rank))
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, OUT)).to(dtype)


def params_np(model):
    return [p.detach().numpy().astype(np.float64) for p in model.parameters()]


def np_grads(params, x, t):
    """Gradients of mean((tanh(x W1ᵀ + b1) W2ᵀ + b2 − t)²) for W1, b1, W2, b2."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1.T + b1)
    y = h @ w2.T + b2
    dy = 2 * (y - t) / y.size
    dz = (dy @ w2) * (1 - h**2)
    return [dz.T @ x, dz.sum(0), dy.T @ h, dy.sum(0)]


def loss_of(model, x, t):
    dtype = next(model.parameters()).dtype
    return ((model(ow.tensor(x, dtype=dtype)) - ow.tensor(t, dtype=dtype)) ** 2).mean()


class NumpySGD:
    def __init__(self, lr, momentum):
        self.lr, self.momentum, self.bufs = lr, momentum, None

    def step(self, params, grads):
        if self.bufs is None:
            self.bufs = [g.copy() for g in grads]
        else:
            self.bufs = [self.momentum * b + g for b, g in zip(self.bufs, grads)]
        return [p - self.lr * b for p, b in zip(params, self.bufs)]


class NumpyAdam:
    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8):
        self.lr, (self.b1, self.b2), self.eps, self.t = lr, betas, eps, 0
        self.m = self.v = None

    def step(self, params, grads):
        if self.m is None:
            self.m, self.v = [np.zeros_like(g) for g in grads], [np.zeros_like(g) for g in grads]
        self.t += 1
        self.m = [self.b1 * m + (1 - self.b1) * g for m, g in zip(self.m, grads)]
        self.v = [self.b2 * v + (1 - self.b2) * g * g for v, g in zip(self.v, grads)]
        out = []
        for p, m, v in zip(params, self.m, self.v):
            mhat, vhat = m / (1 - self.b1**self.t), v / (1 - self.b2**self.t)
            out.append(p - self.lr * mhat / (np.sqrt(vhat) + self.eps))
        return out


def assert_all_close(got, want, atol, what):
    for i, (g, w) in enumerate(zip(got, want)):
        err = float(np.max(np.abs(np.asarray(g, np.float64) - w))) if w.size else 0.0
        assert err <= atol, f"{what}: tensor {i} differs by {err:.3g} (limit {atol:.3g})"


# -- checks -------------------------------------------------------------------------------------


def check_training_equals_full_batch(optimizer, bucket_cap_mb, gradient_as_bucket_view):
    """N ranks on 1/N of the batch each = one process on the whole batch (NumPy and opweave), 20 steps."""
    original = params_np(mlp())
    everyone = [None] * N
    dist.all_gather_object(everyone, original)
    model = mlp()
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb, gradient_as_bucket_view=gradient_as_bucket_view)
    assert_all_close(params_np(model), everyone[0], 0.0, "parameters after the initial broadcast")
    single = mlp(seed_rank=0)  # rank 0's initial parameters, trained alone on the whole batch
    make = {
        "sgd": (lambda ps: ow.optim.SGD(ps, lr=0.1, momentum=0.9), NumpySGD(0.1, 0.9)),
        "adam": (lambda ps: ow.optim.Adam(ps, lr=0.01), NumpyAdam(0.01)),
    }[optimizer]
    opt, opt_single, oracle = make[0](ddp.parameters()), make[0](single.parameters()), make[1]
    reference = everyone[0]
    for step in range(20):
        x, t, mine = batch(step)
        opt.zero_grad()
        loss_of(ddp, x[mine], t[mine]).backward()
        want = np_grads(reference, x, t)
        assert_all_close([p.grad.numpy() for p in model.parameters()], want, 1e-9, f"gradients at step {step}")
        opt.step()
        opt_single.zero_grad()
        loss_of(single, x, t).backward()
        opt_single.step()
        reference = oracle.step(reference, want)
    assert_all_close(params_np(model), reference, 1e-6, f"{optimizer}: parameters after 20 steps vs NumPy")
    assert_all_close(params_np(model), params_np(single), 1e-6, f"{optimizer}: vs one process on the batch")
    if gradient_as_bucket_view:  # .grad is the bucket's memory
        p = next(model.parameters())
        before = p.grad.numpy().copy()
        ddp.reducer.bucket_view(0).add_(1.0)
        assert np.array_equal(p.grad.numpy(), before + 1.0)


def check_no_sync_accumulates():
    """Two micro-batches under no_sync stay local; the third, synced, averages the sum of all three."""
    model = mlp()
    ddp = DDP(model, bucket_cap_mb=TINY_BUCKETS)
    params = params_np(model)
    total_local = [np.zeros_like(p) for p in params]
    total_all = [np.zeros_like(p) for p in params]
    for micro in range(3):
        x, t, mine = batch(micro, salt=5)
        local = np_grads(params, x[mine], t[mine])
        every = [
            np_grads(params, x[r * PER_RANK : (r + 1) * PER_RANK], t[r * PER_RANK : (r + 1) * PER_RANK])
            for r in range(N)
        ]
        total_local = [a + b for a, b in zip(total_local, local)]
        total_all = [a + sum(g[i] for g in every) for i, a in enumerate(total_all)]
        if micro < 2:
            with ddp.no_sync():
                loss_of(ddp, x[mine], t[mine]).backward()
            assert_all_close([p.grad.numpy() for p in model.parameters()], total_local, 1e-12, "no_sync: local sum")
        else:
            loss_of(ddp, x[mine], t[mine]).backward()
    averaged = [a / N for a in total_all]
    assert_all_close([p.grad.numpy() for p in model.parameters()], averaged, 1e-12, "after no_sync: average of sums")


class Branches(nn.Module):
    """``used`` always takes part; ``extra`` only when ``use_extra`` says so."""

    def __init__(self):
        super().__init__()
        self.used = nn.Linear(IN, OUT).double()
        self.extra = nn.Linear(IN, OUT).double()
        self.use_extra = False

    def forward(self, x):
        y = self.used(x)
        return y + self.extra(x) if self.use_extra else y


def check_unused_without_find_unused_raises():
    ow.manual_seed(SEED)
    model = Branches()
    ddp = DDP(model)
    x, t, mine = batch(0, salt=9)
    loss_of(ddp, x[mine], t[mine]).backward()  # extra gets no gradient: the reduction cannot finish
    try:
        ddp(ow.tensor(x[mine]))
    except RuntimeError as exc:
        text = str(exc)
        assert "Expected to have finished reduction in the prior iteration" in text, text
        assert "find_unused_parameters=True" in text, text
        assert f"did not receive grad for rank {RANK}: 2 3" in text, text
        assert "extra.weight, extra.bias" in text, text
    else:
        raise AssertionError("a parameter without gradient did not raise at the next forward")
    model.use_extra = True  # the job goes on: after the error, a full iteration works
    loss_of(ddp, x[mine], t[mine]).backward()


def check_find_unused_parameters():
    """Unused everywhere: .grad stays None; unused on some ranks: the average counts them as zeros."""
    ow.manual_seed(SEED)
    model = Branches()
    ddp = DDP(model, find_unused_parameters=True, bucket_cap_mb=TINY_BUCKETS)
    params = params_np(model)
    for step in range(3):
        model.zero_grad()
        model.use_extra = step == 2 and RANK == 0
        x, t, mine = batch(step, salt=11)
        loss_of(ddp, x[mine], t[mine]).backward()
        used_grads, extra_grads = [], []
        for r in range(N):
            rows = slice(r * PER_RANK, (r + 1) * PER_RANK)
            w, b, we, be = params
            xs = x[rows]
            y = xs @ w.T + b + ((xs @ we.T + be) if (step == 2 and r == 0) else 0)
            dy = 2 * (y - t[rows]) / y.size
            used_grads.append([dy.T @ xs, dy.sum(0)])
            extra_grads.append([dy.T @ xs, dy.sum(0)] if (step == 2 and r == 0) else [0 * w, 0 * b])
        want_used = [sum(g[i] for g in used_grads) / N for i in range(2)]
        got = [model.used.weight.grad.numpy(), model.used.bias.grad.numpy()]
        assert_all_close(got, want_used, 1e-12, f"find_unused: used parameters at step {step}")
        if step < 2:
            assert model.extra.weight.grad is None and model.extra.bias.grad is None, "globally unused got a grad"
        else:
            want_extra = [sum(g[i] for g in extra_grads) / N for i in range(2)]
            got = [model.extra.weight.grad.numpy(), model.extra.bias.grad.numpy()]
            assert_all_close(got, want_extra, 1e-12, "find_unused: used on rank 0 only")


def check_static_graph():
    """static_graph: the parameters unused in the first iteration are skipped in every iteration after."""
    ow.manual_seed(SEED)
    model = Branches()
    ddp = DDP(model, static_graph=True, bucket_cap_mb=TINY_BUCKETS)
    w, b = params_np(model)[:2]
    for step in range(2):
        model.zero_grad()
        x, t, _ = batch(step, salt=19)
        mine = slice(RANK * PER_RANK, (RANK + 1) * PER_RANK)
        loss_of(ddp, x[mine], t[mine]).backward()
        want = np_grads_linear(w, b, x, t)
        assert_all_close([model.used.weight.grad.numpy(), model.used.bias.grad.numpy()], want, 1e-12, "static")
        assert model.extra.weight.grad is None


def np_grads_linear(w, b, x, t):
    """Gradients of mean((x Wᵀ + b − t)²), averaged over the ranks' equal shares (= over the whole batch)."""
    dy = 2 * (x @ w.T + b - t) / (PER_RANK * OUT) / N
    return [dy.T @ x, dy.sum(0)]


def check_comm_hooks(kind):
    """The default hooks: allreduce as the default path; fp16/bf16 within their roundings of g, g/N and the sum."""
    dtype = ow.float64 if kind == "allreduce" else ow.float32
    model = mlp(dtype)
    ddp = DDP(model, bucket_cap_mb=TINY_BUCKETS)
    hook = {
        "allreduce": default_hooks.allreduce_hook,
        "fp16": default_hooks.fp16_compress_hook,
        "bf16": default_hooks.bf16_compress_hook,
        "fp16 wrapper": default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook),
        "bf16 wrapper": default_hooks.bf16_compress_wrapper(default_hooks.allreduce_hook),
    }[kind]
    ddp.register_comm_hook(None, hook)
    try:
        ddp.register_comm_hook(None, hook)
    except RuntimeError as exc:
        assert "can only be called once" in str(exc)
    else:
        raise AssertionError("a second register_comm_hook did not raise")
    for step in range(2):
        x, t, mine = batch(step, salt=13)
        model.zero_grad()
        with ddp.no_sync():  # this rank's own gradients, the hook's inputs
            loss_of(ddp, x[mine], t[mine]).backward()
        local = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
        every = [None] * N
        dist.all_gather_object(every, local)
        model.zero_grad()
        loss_of(ddp, x[mine], t[mine]).backward()
        got = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
        for i, g in enumerate(got):
            parts = np.stack([e[i] for e in every]) / N
            want = parts.sum(0)
            spread = np.abs(parts).sum(0)
            if kind == "allreduce":
                bound = 1e-12 * (1 + spread)
            else:
                # g rounded to the narrow dtype, then g/N rounded (2u relative each, plus half the smallest
                # subnormal), summed in float32 and rounded once more (u relative)
                unit, tiny = (2.0**-11, 2.0**-25) if kind.startswith("fp16") else (2.0**-8, 1e-38)
                bound = 2.01 * unit * spread + 1.01 * unit * np.abs(want) + (2 * N + 1) * tiny
            err = np.abs(g - want)
            assert np.all(err <= bound), f"{kind} hook, step {step}, tensor {i}: error {err.max():.3g}"


def check_custom_hook_sees_buckets_during_backward():
    """A hook gets GradBuckets in order, launched while backward still runs (before the first layer's grad)."""
    model = mlp()
    ddp = DDP(model, bucket_cap_mb=TINY_BUCKETS)
    events = []

    def hook(state, bucket):
        assert state == "state"
        events.append(("bucket", bucket.index(), bucket.is_last(), len(bucket.parameters())))
        assert all(tuple(g.shape) == tuple(p.shape) for g, p in zip(bucket.gradients(), bucket.parameters()))
        fut = Future()
        work = dist.all_reduce(bucket.buffer(), async_op=True)
        work.wait()
        fut.set_result(bucket.buffer() / N)
        return fut

    ddp.register_comm_hook("state", hook)
    first_weight = next(model.parameters())
    first_weight.register_post_accumulate_grad_hook(lambda p: events.append(("first layer grad",)))
    x, t, mine = batch(0, salt=17)
    loss_of(ddp, x[mine], t[mine]).backward()
    buckets = [e for e in events if e[0] == "bucket"]
    assert [e[1] for e in buckets] == list(range(len(ddp.reducer.buckets))), events
    assert len(buckets) >= 3 and buckets[-1][2] and not buckets[0][2], events
    assert sum(e[3] for e in buckets) == 4
    assert events.index(("first layer grad",)) > events.index(buckets[0]), events
    want = np_grads(params_np(model), x, t)  # the parameters did not change: no optimizer step
    assert_all_close([p.grad.numpy() for p in model.parameters()], want, 1e-12, "custom hook")

    ddp2 = DDP(mlp(), bucket_cap_mb=TINY_BUCKETS)
    ddp2.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    try:
        loss_of(ddp2, x[mine], t[mine]).backward()
    except TypeError as exc:
        assert "must return an opweave.futures.Future" in str(exc), exc
    else:
        raise AssertionError("a hook that returns a tensor did not raise")
    dist.barrier()


class Scaled(nn.Module):
    """y = (x W) * scale, with ``scale`` a buffer."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(IN, OUT).double()
        self.register_buffer("scale", ow.full((OUT,), float(RANK + 2), dtype=ow.float64))
        self.register_buffer("calls", ow.tensor(RANK * 10))

    def forward(self, x):
        self.calls += 1
        return self.lin(x) * self.scale


def check_buffers_broadcast(broadcast_buffers):
    model = Scaled()
    ddp = DDP(model, broadcast_buffers=broadcast_buffers)
    assert model.scale.tolist() == [2.0] * OUT and int(model.calls) == 0, "buffers not broadcast at construction"
    model.scale.fill_(RANK + 5.0)  # rank-dependent again: the forward sees rank 0's when broadcasting
    x = np.ones((2, IN))
    out = ddp(ow.tensor(x))
    w, b = params_np(model)
    scale = 5.0 if broadcast_buffers else RANK + 5.0
    assert_all_close([out.detach().numpy()], [(x @ w.T + b) * scale], 1e-12, "forward with buffers")
    assert int(model.calls) == 1
    out.sum().backward()
    with ddp.no_sync():  # PyTorch: the forward after a no_sync forward does not broadcast buffers
        ddp(ow.tensor(x))
    model.scale.fill_(RANK + 7.0)
    out = ddp(ow.tensor(x))
    assert_all_close([out.detach().numpy()], [(x @ w.T + b) * (RANK + 7.0)], 1e-12, "forward after no_sync")


def check_module_and_state_dict():
    model = mlp()
    ddp = DDP(model)
    assert ddp.module is model
    keys = list(ddp.state_dict())
    assert keys == ["module." + k for k in model.state_dict()], keys
    state = {k: v.clone() for k, v in ddp.state_dict().items()}
    other = DDP(mlp())
    other.load_state_dict(state)
    assert_all_close(params_np(other.module), params_np(model), 0.0, "load_state_dict")
    for bad, error in [({"device_ids": [0]}, ValueError), ({"bucket_cap_mb": 0}, ValueError)]:
        try:
            DDP(mlp(), **bad)
        except error:
            pass
        else:
            raise AssertionError(f"DDP(..., {bad}) did not raise {error.__name__}")
    frozen = mlp().requires_grad_(False)
    try:
        DDP(frozen)
    except RuntimeError as exc:
        assert "doesn't have any parameter that requires a gradient" in str(exc)
    else:
        raise AssertionError("DDP of a module without trainable parameters did not raise")


def check_sampler_shards():
    sampler = ow.utils.data.DistributedSampler(range(10), shuffle=False)  # opweave.utils.data, as torch.utils.data
    total = 10 + (-10) % N  # padded with the first indices so that every rank gets as many
    assert list(sampler) == [i % 10 for i in range(RANK, total, N)]
    assert sampler.num_replicas == N and sampler.rank == RANK


for opt in ["sgd", "adam"]:
    check(f"training {opt}", check_training_equals_full_batch, opt, 25, False)
check("training, small buckets, bucket views", check_training_equals_full_batch, "sgd", TINY_BUCKETS, True)
check("no_sync", check_no_sync_accumulates)
check("unused without find_unused_parameters", check_unused_without_find_unused_raises)
check("find_unused_parameters", check_find_unused_parameters)
check("static_graph", check_static_graph)
for kind in ["allreduce", "fp16", "bf16", "fp16 wrapper", "bf16 wrapper"]:
    check("comm hook", check_comm_hooks, kind)
check("custom comm hook", check_custom_hook_sees_buckets_during_backward)
for flag in [True, False]:
    check("buffers", check_buffers_broadcast, flag)
check("module and state_dict", check_module_and_state_dict)
check("sampler", check_sampler_shards)
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
sys.exit(1 if failures and RANK == 0 else 0)

"""DistributedDataParallel: a real 2-rank job against NumPy, and the pieces that need no MPI.

The job (``_job_ddp.py``) trains the same MLP with DDP on 2 ranks (half the batch each)
and checks it against a NumPy forward/backward/SGD/Adam of the whole batch, plus
``no_sync``, unused parameters, communication hooks, buffers and ``state_dict``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import opweave as ow
import pytest
from opweave.futures import Future, collect_all, wait_all

HERE = Path(__file__).parent
JOB_LIMIT_S = 600  # a hung job fails the test rather than stalling CI


def test_ddp_on_two_ranks_against_numpy():
    pytest.importorskip("mpi4py", reason='opweave.distributed needs pip install "opweave[distributed]"')
    seed = str(np.random.SeedSequence().entropy % 2**31)
    cmd = [sys.executable, "-m", "opweave.distributed.run", "-n", "2", str(HERE / "_job_ddp.py"), seed]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_LIMIT_S)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"SEED={seed}\n{report}"
    assert "on 2 ranks" in done.stdout and "OK" in done.stdout, report


# -- without MPI --------------------------------------------------------------------------------


def test_ddp_needs_a_process_group():
    from opweave.nn.parallel import DistributedDataParallel

    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(ow.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="must be an opweave.nn.Module"):
        DistributedDataParallel(lambda x: x)
    assert ow.nn.parallel.DistributedDataParallel is DistributedDataParallel


def test_queue_callback_runs_once_backward_has_finished():
    from opweave.autograd.engine import queue_callback

    w = ow.tensor([1.0, 2.0], requires_grad=True)
    b = ow.tensor([3.0], requires_grad=True)
    events = []

    def at_end():
        events.append(("end", w.grad.tolist(), b.grad.tolist()))
        queue_callback(lambda: events.append(("queued by a callback",)))

    def hook(param):
        events.append(("hook", param.grad.tolist()))
        if len(events) == 1:
            queue_callback(at_end)

    w.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(hook)
    ((w * w).sum() * b.sum()).backward()
    assert [e[0] for e in events] == ["hook", "hook", "end", "queued by a callback"]
    assert events[2][1:] == ([6.0, 12.0], [5.0])  # d/dw = 2 w b, d/db = sum(w²)
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        queue_callback(lambda: None)

    events.clear()  # a callback queued by an inner backward runs at the end of that one
    x = ow.tensor([2.0], requires_grad=True)

    def nested(param):
        inner = ow.tensor([1.0], requires_grad=True)
        with ow.enable_grad():  # hooks run with grad mode off
            (inner * 3).sum().backward()
        queue_callback(lambda: events.append("outer end"))

    x.register_post_accumulate_grad_hook(nested)
    (x * 2).sum().backward()
    assert events == ["outer end"]


def test_future_then_and_errors():
    fut = Future()
    assert not fut.done()
    chained = fut.then(lambda f: f.value() * 2)
    seen = []
    fut.add_done_callback(lambda f: seen.append(f.value()))
    with pytest.raises(RuntimeError, match="not completed"):
        fut.value()
    fut.set_result(21)
    assert fut.done() and fut.wait() == 21 and chained.wait() == 42 and seen == [21]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        fut.set_result(1)
    failing = fut.then(lambda f: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.wait()
    errored = Future()
    errored.set_exception(ValueError("planted"))
    with pytest.raises(ValueError, match="planted"):
        errored.then(lambda f: f.value()).wait()
    with pytest.raises(TypeError, match="expected an exception"):
        Future().set_exception("not an exception")


def test_future_completed_from_another_thread():
    futures = [Future() for _ in range(3)]
    combined = collect_all(futures)

    def complete():
        for i, f in enumerate(futures):
            f.set_result(i)

    worker = threading.Thread(target=complete)
    worker.start()
    assert [f.wait() for f in combined.wait()] == [0, 1, 2]
    worker.join()
    assert wait_all(futures) == [0, 1, 2] and collect_all([]).wait() == []


def test_default_hooks_are_where_pytorch_has_them():
    from opweave.distributed.algorithms.ddp_comm_hooks import DDPCommHookType, default_hooks

    names = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]
    assert all(callable(getattr(default_hooks, n)) for n in names)
    assert DDPCommHookType.FP16_COMPRESS.value.func is default_hooks.fp16_compress_hook


def test_digits_example_shards_the_same_batches_over_any_number_of_ranks():
    """Rank r's share of step i (examples/train_digits.py) is every N-th sample of the one-rank step i."""
    import importlib.util

    path = HERE.parents[1] / "examples" / "train_digits.py"
    spec = importlib.util.spec_from_file_location("train_digits_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    n, batch = 150, 16
    alone = example.shard_batches(n, batch, epoch=3, seed=0)
    assert sorted(np.concatenate(alone).tolist()) == list(range(n))
    for world in (2, 4):
        shards = [example.shard_batches(n, batch, 3, 0, rank, world) for rank in range(world)]
        padded = np.concatenate(alone + [np.concatenate(alone)[: -n % world]])
        for i, one in enumerate(alone):
            together = np.stack([s[i] for s in shards], axis=1).reshape(-1) if len(one) % world == 0 else None
            if together is not None:
                assert together.tolist() == one.tolist(), (world, i)
            else:  # the last step: the sampler pads with the epoch's first samples
                got = np.concatenate([s[i] for s in shards])
                assert sorted(got.tolist()) == sorted(padded[i * batch :].tolist()), (world, i)

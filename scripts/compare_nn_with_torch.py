"""Developer check: opweave.nn / opweave.optim beside PyTorch (state-dict keys, reprs, outputs, updates, schedules).

Run: ``python scripts/compare_nn_with_torch.py``. Prints one line per case with the largest difference.
"""

from __future__ import annotations

import sys

import numpy as np
import opweave

try:
    import torch
except ImportError:
    sys.exit("compare_nn_with_torch.py needs PyTorch (pip install torch)")

MODULES = [
    ("nn.Transformer(8, 2, 1, 1, 16)", None),
    ("nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2)", (5, 2, 3)),
    ("nn.GRU(3, 4, batch_first=True)", (2, 5, 3)),
    (
        "nn.Sequential(nn.Conv2d(2, 4, 3, padding='same', padding_mode='replicate'), nn.BatchNorm2d(4),"
        " nn.GELU(approximate='tanh'), nn.AdaptiveAvgPool2d(1), nn.Flatten())",
        (2, 2, 5, 5),
    ),
    ("nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)", (2, 3, 8)),
    ("nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1, dilation=2)", (1, 2, 4, 4)),
    ("nn.InstanceNorm2d(3, affine=True, track_running_stats=True)", (2, 3, 4, 4)),
    ("nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True)", None),
    ("nn.EmbeddingBag(10, 3, mode='max')", None),
]

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
]

SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, 3, 0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, [2, 5, 5], 0.1),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, 5, 0.01),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.9**e),
    "LinearLR": lambda m, o: m.LinearLR(o, 0.2, 1.0, 4),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, 1.0, total_steps=13, three_phase=True),
    "SequentialLR": lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.5, total_iters=2), m.CosineAnnealingLR(o, 4)], [3]),
}


def compare_modules() -> None:
    """Same architecture in both: state-dict keys, repr, and eval-mode output with copied weights."""
    for expr, shape in MODULES:
        ours = eval(expr, {"nn": opweave.nn})  # noqa: S307 - fixed expressions above
        theirs = eval(expr, {"nn": torch.nn})  # noqa: S307
        keys = list(ours.state_dict()) == list(theirs.state_dict())
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
        line = f"{expr[:60]:<60} keys {keys!s:<5} repr {(repr(ours) == repr(theirs))!s:<5}"
        if shape:
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            a = ours.eval()(opweave.tensor(x))
            b = theirs.eval()(torch.tensor(x))
            a, b = (a[0], b[0]) if isinstance(a, tuple) else (a, b)
            line += f" max |diff| {np.abs(a.detach().numpy() - b.detach().numpy()).max():.1e}"
        print(line)


def compare_optimizers() -> None:
    """Eight steps with the same gradients: parameters and state-dict keys."""
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(8)]
    for name, kw in OPTIMIZERS:
        a = opweave.nn.Parameter(opweave.tensor(p0))
        b = torch.nn.Parameter(torch.tensor(p0))
        oa, ob = getattr(opweave.optim, name)([a], **kw), getattr(torch.optim, name)([b], **kw)
        for g in grads:
            a.grad, b.grad = opweave.tensor(g), torch.tensor(g)
            oa.step()
            ob.step()
        sa, sb = oa.state_dict(), ob.state_dict()
        same = sorted(sa["state"][0]) == sorted(sb["state"][0]) and set(sa["param_groups"][0]) == set(
            sb["param_groups"][0]
        )
        diff = np.abs(a.detach().numpy() - b.detach().numpy()).max()
        print(f"{name:<8} {kw!s:<80} state layout same {same!s:<5} max |diff| {diff:.1e}")


def compare_schedulers() -> None:
    """Twelve steps of each schedule."""
    for name, make in SCHEDULERS.items():
        lrs = []
        for lib in (opweave, torch):
            opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1, momentum=0.9)
            sched = make(lib.optim.lr_scheduler, opt)
            seq = [opt.param_groups[0]["lr"]]
            for _ in range(12):
                opt.step()
                sched.step()
                seq.append(opt.param_groups[0]["lr"])
            lrs.append(seq)
        print(f"{name:<18} max |diff| {max(abs(x - y) for x, y in zip(*lrs)):.1e}")


if __name__ == "__main__":
    compare_modules()
    compare_optimizers()
    compare_schedulers()

"""Check files both ways with PyTorch installed: opweave.save -> torch.load and torch.save -> opweave.load.

For every case, the loaded object must equal the saved one bit for bit (dtype, shape,
strides, storage offset, elements as raw bytes, quantization parameters), views must
still share one storage, and a module/optimizer state_dict saved by opweave must load
into a real ``torch.nn.Module`` / ``torch.optim`` with ``load_state_dict``. torch.load
runs with ``weights_only=True`` (and again with ``mmap=True`` from a file). Prints one
line per case and exits non-zero if any fails::

    python scripts/check_torch_interop.py
"""

from __future__ import annotations

import collections
import io
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np

try:
    import torch
except ImportError:
    sys.exit("check_torch_interop.py needs PyTorch (pip install torch)")

import opweave as ow

warnings.filterwarnings("ignore", category=UserWarning)  # TypedStorage and quantization deprecation notes

_BITS = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}
_TORCH_ONLY_VIEW = {torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}


def torch_bytes(t: torch.Tensor) -> bytes:
    if t.is_quantized:
        t = t.int_repr()
    t = t.detach().contiguous()
    if t.dtype in _TORCH_ONLY_VIEW:
        t = t.view({2: torch.int16, 1: torch.uint8}[t.element_size()])
    return t.numpy().tobytes()


def ow_bytes(t) -> bytes:
    if t.is_quantized:
        t = t.int_repr()
    return np.ascontiguousarray(t.numpy(force=True)).tobytes()


def compare(tt, ot, path, storages):
    """``tt`` (torch) and ``ot`` (opweave) hold the same thing; ``storages`` pairs their storages."""
    if isinstance(tt, torch.Tensor):
        assert isinstance(ot, ow.Tensor), f"{path}: {type(ot)}"
        assert str(tt.dtype).removeprefix("torch.") == ot.dtype.name, f"{path}: {tt.dtype} vs {ot.dtype}"
        assert tuple(tt.shape) == tuple(ot.shape), f"{path}: shape"
        assert tt.device.type == ot.device.type, f"{path}: device {tt.device} vs {ot.device}"
        if tt.device.type == "meta":
            return
        assert tuple(tt.stride()) == tuple(ot.stride()), f"{path}: stride {tt.stride()} vs {ot.stride()}"
        assert tt.storage_offset() == ot.storage_offset(), f"{path}: offset"
        assert torch_bytes(tt) == ow_bytes(ot), f"{path}: elements differ"
        if tt.is_quantized:
            if tt.qscheme() == torch.per_tensor_affine:
                assert (tt.q_scale(), tt.q_zero_point()) == (ot.q_scale(), ot.q_zero_point()), f"{path}: qparams"
            else:
                assert tt.q_per_channel_scales().tolist() == ot.q_per_channel_scales().tolist(), f"{path}: scales"
                assert tt.q_per_channel_zero_points().tolist() == ot.q_per_channel_zero_points().tolist()
                assert tt.q_per_channel_axis() == ot.q_per_channel_axis(), f"{path}: axis"
        storages.append((tt.untyped_storage()._cdata, id(ot.untyped_storage()), path))
        return
    if isinstance(tt, dict):
        assert isinstance(ot, dict) and list(tt) == list(ot), f"{path}: keys"
        assert isinstance(tt, collections.OrderedDict) == isinstance(ot, collections.OrderedDict), f"{path}: type"
        for k, ok in zip(tt, ot):
            compare(tt[k], ot[ok], f"{path}[{k!r}]", storages)
        return
    if isinstance(tt, (list, tuple)):
        assert type(tt) is type(ot) and len(tt) == len(ot), f"{path}: {type(tt)} vs {type(ot)}"
        for i, (a, b) in enumerate(zip(tt, ot)):
            compare(a, b, f"{path}[{i}]", storages)
        return
    if isinstance(tt, torch.dtype):
        assert str(tt).removeprefix("torch.") == ot.name, path
        return
    if isinstance(tt, torch.device):
        assert str(tt) == str(ot), path
        return
    if isinstance(tt, float) and tt != tt:
        assert ot != ot, path
        return
    assert tt == ot and type(tt) is type(ot), f"{path}: {tt!r} vs {ot!r}"


def check_aliasing(storages):
    pairs = {}
    for torch_id, ow_id, path in storages:
        assert pairs.setdefault(torch_id, ow_id) == ow_id, f"{path}: aliasing differs"
    assert len(set(pairs.values())) == len(pairs), "distinct storages were merged"


# -- the cases: each builds the same object in both frameworks from the same NumPy data ---------------------------

_DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
]


def both(host: np.ndarray, name: str):
    """The same bits as a torch tensor and an opweave tensor."""
    ot = ow.from_numpy(host.copy())
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        tt = torch.from_numpy(host.view(_BITS[host.itemsize]).copy()).view(getattr(torch, name))
    else:
        tt = torch.from_numpy(host.copy())
    return tt, ot


def dtype_case():
    rng = np.random.default_rng(0)
    t, o = {}, {}
    for name in _DTYPES:
        dt = getattr(ow, name)
        if name == "bool":
            host = rng.integers(0, 2, 37).astype(np.bool_)
        else:
            host = np.frombuffer(rng.integers(0, 256, 37 * dt.itemsize, dtype=np.uint8).tobytes(), dt.numpy)
        t[name], o[name] = both(host, name)
        t[name + "_0dim"], o[name + "_0dim"] = both(host[:1].reshape(()), name)
        t[name + "_empty"], o[name + "_empty"] = both(host[:0].reshape(0, 3), name)
    return t, o


def view_case():
    host = np.arange(24, dtype=np.float32) - 7.5
    tb, ob = both(host, "float32")
    t = {
        "base": tb,
        "grid_T": tb.view(4, 6).t(),
        "step": tb[::3],
        "tail": tb[5:],
        "strided": tb.as_strided((3, 2), (1, 5), 4),
        "expanded": tb[3:4].expand(3, 2),
    }
    o = {
        "base": ob,
        "grid_T": ob.view(4, 6).mT,
        "step": ob[::3],
        "tail": ob[5:],
        "strided": ow.as_strided(ob, (3, 2), (1, 5), 4),
        "expanded": ob[3:4].expand(3, 2),
    }
    return t, o


def quantized_case():
    host = np.array([[-1.0, 0.0, 0.5, 2.0], [3.25, -0.75, 1.5, 10.0]], np.float32)
    tx, ox = both(host, "float32")
    t = {
        "pt": torch.quantize_per_tensor(tx, 0.05, 7, torch.quint8),
        "pt32": torch.quantize_per_tensor(tx, 0.001, 11, torch.qint32),
        "pc": torch.quantize_per_channel(
            tx, torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64), torch.tensor([1, 2, 3, 4]), 1, torch.qint8
        ),
    }
    o = {
        "pt": ow.quantize_per_tensor(ox, 0.05, 7, ow.quint8),
        "pt32": ow.quantize_per_tensor(ox, 0.001, 11, ow.qint32),
        "pc": ow.quantize_per_channel(
            ox, ow.tensor([0.1, 0.2, 0.3, 0.4], dtype=ow.float64), ow.tensor([1, 2, 3, 4]), 1, ow.qint8
        ),
    }
    t["pt_T"], o["pt_T"] = t["pt"].t(), o["pt"].mT
    return t, o


def nested_case():
    tt, ot = both(np.array([1.5, -2.0, 3.0], np.float32), "float32")
    t = {
        "list": [tt, 1, 2.5, "s", None, True],
        "tuple": (tt[1:], (tt, -7)),
        "ordered": collections.OrderedDict([("z", 1), ("a", tt)]),
        "meta": torch.empty(2, 3, device="meta"),
        "dtype": torch.bfloat16,
        "device": torch.device("cpu"),
        "numbers": {"big": 2**70, "nan": float("nan"), "neg0": -0.0, "c": 1 + 2j},
        "bytes": b"\x00raw",
        3: "int key",
    }
    o = {
        "list": [ot, 1, 2.5, "s", None, True],
        "tuple": (ot[1:], (ot, -7)),
        "ordered": collections.OrderedDict([("z", 1), ("a", ot)]),
        "meta": ow.empty(2, 3, device="meta"),
        "dtype": ow.bfloat16,
        "device": ow.device("cpu"),
        "numbers": {"big": 2**70, "nan": float("nan"), "neg0": -0.0, "c": 1 + 2j},
        "bytes": b"\x00raw",
        3: "int key",
    }
    return t, o


def _module():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def state_dict_case():
    model = _module()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(5, 3)).square().sum().backward()
    opt.step()
    t = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}
    o = ow.load(_torch_saved(t))  # the opweave twin: what opweave makes of PyTorch's file
    return t, o


def _torch_saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


CASES = {
    "every dtype (random bits)": dtype_case,
    "views of one storage": view_case,
    "quantized": quantized_case,
    "nested containers": nested_case,
    "module + optimizer state_dict": state_dict_case,
}


def opweave_to_torch(t, o, tmp: Path):
    path = tmp / "ow.pt"
    ow.save(o, path)
    for kwargs in ({}, {"mmap": True}):
        storages: list = []
        compare(torch.load(path, weights_only=True, **kwargs), o, "obj", storages)
        check_aliasing(storages)


def torch_to_opweave(t, o, tmp: Path):
    path = tmp / "torch.pt"
    torch.save(t, path)
    for kwargs in ({}, {"mmap": True}):
        storages: list = []
        compare(t, ow.load(path, **kwargs), "obj", storages)
        check_aliasing(storages)


def state_dict_into_torch(tmp: Path):
    """A state_dict saved by opweave loads into a real module and optimizer with load_state_dict."""
    model = _module()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(5, 3)).square().sum().backward()
    opt.step()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp / "t.pt")
    ow.save(ow.load(tmp / "t.pt"), tmp / "o.pt")  # through opweave and back
    back = torch.load(tmp / "o.pt", weights_only=True)
    fresh = _module()
    fresh.load_state_dict(back["model"])
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=1e-3)
    fresh_opt.load_state_dict(back["optimizer"])
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values()):
        assert torch.equal(a, b), k
    assert fresh_opt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]


def device_tensors_into_torch(tmp: Path):
    """Tensors saved from every other opweave device load in PyTorch with map_location="cpu", views intact."""
    devices = [
        r.name for r in ow.backends.status() if r.kind == "device" and r.available and r.name not in ("cpu", "meta")
    ]
    for device in devices:
        base = ow.arange(12.0).reshape(3, 4).to(device)
        obj = {"w": base, "wT": base.mT, "row": base[1]}
        ow.save(obj, tmp / "dev.pt")
        loaded = torch.load(tmp / "dev.pt", map_location="cpu", weights_only=True)
        storages: list = []
        for key, t in obj.items():
            assert torch_bytes(loaded[key]) == ow_bytes(t), f"{device} {key}"
            assert (
                tuple(loaded[key].stride()) == tuple(t.stride()) and loaded[key].storage_offset() == t.storage_offset()
            )
            storages.append((loaded[key].untyped_storage()._cdata, 0, key))
        assert len({s for s, _, _ in storages}) == 1, f"{device}: views lost their storage"
    return devices


def main() -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for name, make in CASES.items():
            for direction, check in (
                ("opweave.save -> torch.load", opweave_to_torch),
                ("torch.save -> opweave.load", torch_to_opweave),
            ):
                try:
                    check(*make(), tmp_path)
                    print(f"ok    {direction:28}  {name}")
                except Exception:
                    failures += 1
                    print(f"FAIL  {direction:28}  {name}\n{traceback.format_exc()}")
        try:
            devices = device_tensors_into_torch(tmp_path)
            print(f"ok    {'map_location=cpu':28}  tensors saved on {', '.join(devices) or 'no other device'}")
        except Exception:
            failures += 1
            print(f"FAIL  map_location=cpu\n{traceback.format_exc()}")
        try:
            state_dict_into_torch(tmp_path)
            print(f"ok    {'load_state_dict':28}  module and optimizer state saved by opweave")
        except Exception:
            failures += 1
            print(f"FAIL  load_state_dict\n{traceback.format_exc()}")
    print(f"torch {torch.__version__}: {'all passed' if not failures else f'{failures} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

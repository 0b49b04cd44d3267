"""Write the PyTorch interop fixtures under tests/fixtures/torch/ (needs PyTorch; the tests do not).

Each fixture ``NAME.pt`` is written by ``torch.save``; ``NAME.json`` describes what
it holds (containers, scalars, and for each tensor its dtype, shape, strides,
storage offset, which storage it shares, quantization parameters) and
``NAME.npz`` holds each tensor's expected elements as raw bytes, computed from the
NumPy arrays the tensors were made from (for the module and optimizer state,
from the tensors' own values read back through NumPy). Run it from the
repository root after changing it::

    python scripts/make_torch_fixtures.py
"""

from __future__ import annotations

import collections
import json
import pathlib
import sys

import ml_dtypes
import numpy as np

try:
    import torch
except ImportError:
    sys.exit("make_torch_fixtures.py needs PyTorch (pip install torch); the tests themselves do not")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "torch"

# numpy dtype -> (torch dtype, numpy integer type of the same width used to hand the bits to torch)
DTYPES = {
    "bool": (np.bool_, torch.bool),
    "uint8": (np.uint8, torch.uint8),
    "int8": (np.int8, torch.int8),
    "int16": (np.int16, torch.int16),
    "int32": (np.int32, torch.int32),
    "int64": (np.int64, torch.int64),
    "float16": (np.float16, torch.float16),
    "bfloat16": (ml_dtypes.bfloat16, torch.bfloat16),
    "float32": (np.float32, torch.float32),
    "float64": (np.float64, torch.float64),
    "complex64": (np.complex64, torch.complex64),
    "complex128": (np.complex128, torch.complex128),
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, torch.float8_e4m3fn),
    "float8_e5m2": (ml_dtypes.float8_e5m2, torch.float8_e5m2),
}
_BITS = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}


def to_torch(a: np.ndarray) -> torch.Tensor:
    """A torch tensor with exactly ``a``'s bits (ml_dtypes arrays go through an integer view)."""
    a = np.ascontiguousarray(a)
    for name, (npd, td) in DTYPES.items():
        if a.dtype == np.dtype(npd):
            if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
                return torch.from_numpy(a.view(_BITS[a.itemsize]).copy()).view(td)
            return torch.from_numpy(a.copy())
    raise TypeError(a.dtype)


def special_values(name: str) -> np.ndarray:
    """Edge values of each dtype: extremes, signed zeros, infinities, NaNs with payloads, subnormals."""
    npd = DTYPES[name][0]
    if name == "bool":
        return np.array([True, False, True], np.bool_)
    if name in ("uint8", "int8", "int16", "int32", "int64"):
        info = np.iinfo(npd)
        return np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 7, 42], npd)
    if name.startswith("complex"):
        real = special_values("float32" if name == "complex64" else "float64")
        return (real + 1j * real[::-1]).astype(npd)
    info = ml_dtypes.finfo(npd)
    values = np.array([0.0, 1.0, -2.5, float(info.max), float(info.min), float(info.smallest_normal), -0.0], npd)
    extra = [np.array(float(info.smallest_subnormal), npd)]
    if name not in ("float8_e4m3fn",):
        extra += [np.array(np.inf, npd), np.array(-np.inf, npd)]
    nan = np.array(np.nan, npd)
    bits = nan.view(_BITS[nan.itemsize] if nan.itemsize > 1 else np.uint8)
    payload = (bits | np.array(1, bits.dtype)).view(npd) if name not in ("float8_e4m3fn",) else nan
    return np.concatenate([values, *[e.reshape(1) for e in extra], nan.reshape(1), payload.reshape(1)])


class Describer:
    """Turns the saved object into the JSON description and the npz of expected bytes."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.storages: dict[int, int] = {}

    def tensor(self, t: torch.Tensor, expected: np.ndarray | None) -> dict:
        key = f"t{len(self.arrays)}"
        desc = {
            "tensor": key,
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "offset": t.storage_offset(),
            "device": str(t.device),
        }
        if t.device.type == "meta":
            return desc
        desc["storage"] = self.storages.setdefault(t.untyped_storage()._cdata, len(self.storages))
        if t.is_quantized:
            if t.qscheme() == torch.per_tensor_affine:
                desc["quant"] = {"scheme": "per_tensor_affine", "scale": t.q_scale(), "zero_point": t.q_zero_point()}
            else:
                desc["quant"] = {
                    "scheme": "per_channel_affine",
                    "scales": t.q_per_channel_scales().tolist(),
                    "zero_points": t.q_per_channel_zero_points().tolist(),
                    "axis": t.q_per_channel_axis(),
                }
            expected = t.int_repr().numpy() if expected is None else expected
        elif expected is None:
            bits = t.detach().contiguous()
            if bits.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
                bits = bits.view({2: torch.int16, 1: torch.uint8}[bits.element_size()])
            expected = bits.numpy()
        self.arrays[key] = np.ascontiguousarray(expected).reshape(-1).view(np.uint8)
        return desc

    def __call__(self, obj, expected=None):
        if isinstance(obj, torch.Tensor):
            return self.tensor(obj, expected)
        if isinstance(obj, bool) or obj is None:
            return {"const": obj}
        if isinstance(obj, int):
            return {"int": obj}
        if isinstance(obj, float):
            return {"float": obj.hex()}
        if isinstance(obj, complex):
            return {"complex": [obj.real.hex(), obj.imag.hex()]}
        if isinstance(obj, str):
            return {"str": obj}
        if isinstance(obj, bytes):
            return {"bytes": obj.hex()}
        if isinstance(obj, torch.dtype):
            return {"dtype": str(obj).removeprefix("torch.")}
        if isinstance(obj, torch.device):
            return {"device": str(obj)}
        if isinstance(obj, dict):
            expected = expected or {}
            items = [[self(k), self(v, expected.get(k))] for k, v in obj.items()]
            desc = {"ordered_dict" if isinstance(obj, collections.OrderedDict) else "dict": items}
            meta = getattr(obj, "_metadata", None)
            if meta is not None:
                desc["metadata"] = self(meta)
            return desc
        if isinstance(obj, (list, tuple)):
            expected = list(expected or []) + [None] * (len(obj) - len(expected or []))
            kind = "list" if isinstance(obj, list) else "tuple"
            return {kind: [self(v, e) for v, e in zip(obj, expected)]}
        if isinstance(obj, (set, frozenset)):
            return {"set": sorted((self(v) for v in obj), key=json.dumps)}
        raise TypeError(type(obj))


def write(name: str, obj, expected=None) -> None:
    describe = Describer()
    description = describe(obj, expected)
    torch.save(obj, OUT / f"{name}.pt")
    (OUT / f"{name}.json").write_text(json.dumps(description, indent=1) + "\n")
    np.savez_compressed(OUT / f"{name}.npz", **describe.arrays)


def dtypes_fixture():
    arrays = {name: special_values(name) for name in DTYPES}
    arrays["float32_2d"] = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    arrays["bfloat16_2d"] = (np.arange(6, dtype=np.float32).reshape(2, 3) / 3).astype(ml_dtypes.bfloat16)
    write("dtypes", {k: to_torch(v) for k, v in arrays.items()}, arrays)


def views_fixture():
    base = np.arange(24, dtype=np.float32) * 0.5 - 3.0
    t = to_torch(base)
    st = np.lib.stride_tricks.as_strided
    item = base.itemsize
    views = collections.OrderedDict(
        [
            ("base", (t, base)),
            ("reshaped", (t.view(2, 3, 4), base.reshape(2, 3, 4))),
            ("transposed", (t.view(4, 6).t(), base.reshape(4, 6).T)),
            ("every_other", (t[::2], base[::2])),
            ("offset", (t[5:17], base[5:17])),
            ("strided", (t.as_strided((3, 2), (1, 5), 4), st(base[4:], (3, 2), (item, 5 * item)))),
            ("expanded", (t[3:4].expand(3, 2), st(base[3:], (3, 2), (0, 0)))),
            ("scalar_view", (t[7], base[7])),
        ]
    )
    other = np.array([[1, -2], [3, -4]], np.int64)
    to = to_torch(other)
    obj = collections.OrderedDict((k, v[0]) for k, v in views.items())
    obj["ints_T"] = to.t()
    obj["ints"] = to
    obj["zero_dim"] = torch.tensor(3.25, dtype=torch.float64)
    obj["empty"] = torch.empty(0, 3)
    obj["empty_strided"] = torch.empty(2, 0, 4).transpose(0, 2)
    obj["complex_T"] = to_torch(np.array([[1 + 2j, 3 - 4j], [-0.0 + 0j, 5j]], np.complex64)).t()
    expected = {k: v[1] for k, v in views.items()}
    expected.update(
        ints_T=other.T,
        ints=other,
        zero_dim=np.array(3.25),
        empty=np.empty((0, 3), np.float32),
        empty_strided=np.empty((4, 0, 2), np.float32),
        complex_T=np.array([[1 + 2j, 3 - 4j], [-0.0 + 0j, 5j]], np.complex64).T,
    )
    write("views", obj, expected)


def quantized_fixture():
    x = np.array([[-1.0, 0.0, 0.5, 2.0], [3.25, -0.75, 1.5, 10.0]], np.float32)
    tx = to_torch(x)
    q = {
        "per_tensor_quint8": torch.quantize_per_tensor(tx, 0.05, 7, torch.quint8),
        "per_tensor_qint8": torch.quantize_per_tensor(tx, 0.1, -3, torch.qint8),
        "per_tensor_qint32": torch.quantize_per_tensor(tx, 0.001, 11, torch.qint32),
        "per_channel_axis0": torch.quantize_per_channel(
            tx, torch.tensor([0.1, 0.05], dtype=torch.float64), torch.tensor([0, 2]), 0, torch.qint8
        ),
        "per_channel_axis1": torch.quantize_per_channel(
            tx, torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64), torch.tensor([1, 2, 3, 4]), 1, torch.quint8
        ),
    }
    q["per_tensor_T"] = q["per_tensor_qint8"].t()
    write("quantized", q)


def module_fixture():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model(torch.randn(5, 3)).square().sum()
    loss.backward()
    optimizer.step()
    write("module_state_dict", model.state_dict())
    write("optimizer_state_dict", optimizer.state_dict())
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(5, 3)).sum().backward()
    sgd.step()
    write("checkpoint", {"model": model.state_dict(), "optimizer": sgd.state_dict(), "epoch": 3, "loss": 0.125})


def nested_fixture():
    a = np.array([1.5, -2.0, 3.0], np.float32)
    ta = to_torch(a)
    obj = {
        "list": [ta, 1, 2.5, "text", None, True],
        "tuple": (ta[1:], (ta, -7)),
        "ordered": collections.OrderedDict([("z", 1), ("a", ta)]),
        "nested": {"deeper": {"deepest": [ta[::2], {"k": ta}]}},
        "numbers": {"int": 2**40, "neg": -5, "float": -0.0, "complex": 1 + 2j, "big": 2**70},
        "bytes": b"\x00\x01weights",
        "set": {1, 2, 3},
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "meta": torch.empty(2, 3, device="meta"),
        "parameter": torch.nn.Parameter(to_torch(a * 2)),
        3: "int key",
    }
    expected = {
        "list": [a],
        "tuple": (a[1:], (a, None)),
        "ordered": {"a": a},
        "nested": {"deeper": {"deepest": [a[::2], {"k": a}]}},
    }
    write("nested", obj, expected)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    dtypes_fixture()
    views_fixture()
    quantized_fixture()
    module_fixture()
    nested_fixture()
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(
        f"wrote {len(list(OUT.iterdir()))} files, {total / 1024:.1f} KiB, to {OUT.name}/ with torch {torch.__version__}"
    )


if __name__ == "__main__":
    main()

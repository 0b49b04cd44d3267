"""Samples to tensors on a device, tensors back to NumPy, and samples to JSON and back.

Inputs are built on the CPU from NumPy (``opweave.tensor``), moved with
``.to(device)``, and laid out on the device with view prims, so a backend sees
the strides and offsets a layout asks for. Results come back with ``.cpu()``.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow

from .opdb._core import DEVICE, Arr, SampleInput

P = ow.ops.prims


def build_arr(a: Arr, device: str):
    """The tensor of ``a`` on ``device`` in ``a.layout``.

    An Arr with an ``on(values, dtype, device)`` method builds its own base tensors (quantized
    tensors carry parameters); the layout is then applied to them with the same view prims.
    """
    v, dt, layout = a.value, a.dtype, a.layout
    _on = getattr(a, "on", None) or _on_device
    if layout == "cpu":
        return _on(v, dt, "cpu")
    if layout == "transposed":
        perm = list(range(v.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        base = _on(np.ascontiguousarray(v.transpose(perm)), dt, device)
        return P.transpose(base, perm)
    if layout == "strided":
        n = v.shape[-1]
        big = np.zeros(v.shape[:-1] + (2 * n + 1,), dtype=v.dtype)
        big[..., 1::2] = v
        base = _on(big, dt, device)
        nd = v.ndim
        return P.slice(base, [0] * (nd - 1) + [1], list(big.shape), [1] * (nd - 1) + [2])
    if layout == "broadcast":
        base = _on(np.ascontiguousarray(v[:1]), dt, device)
        return P.broadcast_in_dim(base, list(v.shape), list(range(v.ndim)))
    return _on(v, dt, device)


def _on_device(values: np.ndarray, dtype, device: str):
    t = ow.tensor(values, dtype=dtype)
    return t if device == "cpu" else t.to(device)


def build(sample: SampleInput, device: str) -> tuple[list, dict]:
    """``(args, kwargs)`` of ``sample`` with tensors on ``device`` (and :data:`DEVICE` replaced by it)."""
    args = [_build_value(v, device) for v in sample.args]
    kwargs = {k: _build_value(v, device) for k, v in sample.kwargs.items()}
    return args, kwargs


def _build_value(v, device):
    if hasattr(v, "build"):  # a value that builds itself on the device (packed quantized weights)
        return v.build(device)
    if isinstance(v, Arr):
        return build_arr(v, device)
    if v is DEVICE:
        return device
    if isinstance(v, list):
        return [_build_value(x, device) for x in v]
    if isinstance(v, tuple):
        return tuple(_build_value(x, device) for x in v)
    return v


def oracle_args(sample: SampleInput, upcast) -> tuple[list, dict]:
    """The sample's arguments as the oracle sees them: NumPy values.

    ``upcast``: True widens floats to float64 (complex128); ``"opmath"`` computes like
    PyTorch (16-bit floats as float32, others unchanged); False keeps the dtypes.
    """
    args = [_oracle_value(v, upcast) for v in sample.args]
    kwargs = {k: _oracle_value(v, upcast) for k, v in sample.kwargs.items()}
    kwargs.update(sample.oracle_kwargs)
    return args, kwargs


def _oracle_value(v, upcast):
    if hasattr(v, "oracle_value"):  # quantized tensors: integers with their parameters
        return v.oracle_value()
    if isinstance(v, Arr):
        if upcast == "opmath":
            return opmath(v.value)
        return widen(v.value) if upcast else np.array(v.value)
    if isinstance(v, list):
        return [_oracle_value(x, upcast) for x in v]
    if isinstance(v, tuple):
        return tuple(_oracle_value(x, upcast) for x in v)
    return v


def widen(a: np.ndarray) -> np.ndarray:
    """Floats as float64, complex as complex128; bool and integers unchanged (a copy)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind in "biu":
        return a.copy()
    return a.astype(np.float64)


def opmath(a: np.ndarray) -> np.ndarray:
    """float16/bfloat16 values as float32 (PyTorch's computation dtype); other dtypes unchanged (a copy)."""
    a = np.asarray(a)
    if a.dtype.itemsize == 2 and a.dtype.kind not in "iu":
        return a.astype(np.float32)
    return a.copy()


def to_host(t) -> np.ndarray:
    """A NumPy copy of the tensor's elements (through ``.cpu()``)."""
    return np.array(t.cpu().numpy(), copy=True)


def tensors_of(value) -> list:
    """The tensors in a result (a Tensor, or nested tuples/lists of them)."""
    if isinstance(value, ow.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_of(v)]
    return []


# -- JSON ---------------------------------------------------------------------------------------


def encode_array(a: np.ndarray, dtype=None) -> dict:
    """``{"dtype", "shape", "data"}`` with nested lists; nan/±inf as strings and complex as ``[re, im]``."""
    a = np.asarray(a)
    name = dtype.name if dtype is not None else ow.dtype_of_numpy(a.dtype).name
    if a.dtype.kind == "c":
        data = _encode(np.stack([a.real, a.imag], axis=-1).astype(np.float64).tolist())
    elif a.dtype.kind == "f" or a.dtype.kind == "V" or name in ("bfloat16", "float16"):
        data = _encode(a.astype(np.float64).tolist())
    else:
        data = a.tolist()
    return {"dtype": name, "shape": list(a.shape), "data": data}


def _encode(x):
    if isinstance(x, list):
        return [_encode(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        if math.isnan(x):
            return "-nan" if math.copysign(1.0, x) < 0 else "nan"
        return "inf" if x > 0 else "-inf"
    return x


def _decode(x):
    if isinstance(x, list):
        return [_decode(v) for v in x]
    if isinstance(x, str):
        return float(x)
    return x


def decode_array(d: dict) -> np.ndarray:
    """The inverse of :func:`encode_array`."""
    dt = _dtype(d["dtype"])
    data = np.array(_decode(d["data"]), dtype=np.float64 if (dt.is_floating_point or dt.is_complex) else None)
    if dt.is_complex:
        data = data[..., 0] + 1j * data[..., 1] if data.size else np.zeros(d["shape"], np.complex128)
    return np.asarray(data).reshape(d["shape"]).astype(dt.numpy)


def _dtype(name: str):
    d = getattr(ow, name, None)
    if not isinstance(d, ow.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return d


def encode_sample(sample: SampleInput) -> dict:
    """A JSON-able description of ``sample`` (tensors with values, dtype and layout)."""
    out = {
        "desc": sample.desc,
        "args": [_encode_value(v) for v in sample.args],
        "kwargs": {k: _encode_value(v) for k, v in sample.kwargs.items()},
        "oracle_kwargs": {k: _encode_value(v) for k, v in sample.oracle_kwargs.items()},
    }
    if sample.ulps is not None:
        out["ulps"] = sample.ulps
    if sample.signed_zeros:
        out["signed_zeros"] = True
    if sample.nonfinite_only:
        out["nonfinite_only"] = True
    if sample.subnormals:
        out["subnormals"] = True
    return out


def _encode_value(v):
    if isinstance(v, Arr):
        return {"tensor": encode_array(v.value, v.dtype), "layout": v.layout}
    if v is DEVICE:
        return {"device": True}
    if isinstance(v, ow.dtype):
        return {"dtype": v.name}
    if isinstance(v, (list, tuple)):
        return {"list" if isinstance(v, list) else "tuple": [_encode_value(x) for x in v]}
    if isinstance(v, complex):
        return {"complex": [_encode(v.real), _encode(v.imag)]}
    if isinstance(v, float):
        return {"float": _encode(v)}
    if isinstance(v, ow.device):
        return {"device_value": str(v)}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return {"repr": repr(v)}


def decode_sample(d: dict) -> SampleInput:
    """The inverse of :func:`encode_sample`."""
    return SampleInput(
        tuple(_decode_value(v) for v in d.get("args", [])),
        {k: _decode_value(v) for k, v in d.get("kwargs", {}).items()},
        d.get("desc", ""),
        {k: _decode_value(v) for k, v in d.get("oracle_kwargs", {}).items()},
        d.get("ulps"),
        bool(d.get("signed_zeros", False)),
        bool(d.get("nonfinite_only", False)),
        bool(d.get("subnormals", False)),
    )


def _decode_value(v):
    if not isinstance(v, dict):
        return v
    if "tensor" in v:
        t = v["tensor"]
        return Arr(decode_array(t), _dtype(t["dtype"]), v.get("layout", "contiguous"))
    if "device" in v:
        return DEVICE
    if "dtype" in v:
        return _dtype(v["dtype"])
    if "list" in v:
        return [_decode_value(x) for x in v["list"]]
    if "tuple" in v:
        return tuple(_decode_value(x) for x in v["tuple"])
    if "complex" in v:
        re, im = (float(x) for x in v["complex"])
        return complex(re, im)
    if "float" in v:
        return float(v["float"])
    if "device_value" in v:
        return ow.device(v["device_value"])
    raise ValueError(f"cannot replay value {v!r}")

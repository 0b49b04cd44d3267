"""PyTorch's spellings of dtypes, storage classes and qschemes, and their opweave counterparts."""

from __future__ import annotations

from .. import _dtype, _quantized

TORCH = "torch"
UTILS = "torch._utils"

#: opweave dtype -> the legacy typed storage class torch.save names for it (``torch.FloatStorage``)
STORAGE_CLASS = {
    _dtype.float64: "DoubleStorage",
    _dtype.float32: "FloatStorage",
    _dtype.float16: "HalfStorage",
    _dtype.bfloat16: "BFloat16Storage",
    _dtype.int64: "LongStorage",
    _dtype.int32: "IntStorage",
    _dtype.int16: "ShortStorage",
    _dtype.int8: "CharStorage",
    _dtype.uint8: "ByteStorage",
    _dtype.bool_: "BoolStorage",
    _dtype.complex64: "ComplexFloatStorage",
    _dtype.complex128: "ComplexDoubleStorage",
    _dtype.qint8: "QInt8Storage",
    _dtype.quint8: "QUInt8Storage",
    _dtype.qint32: "QInt32Storage",
}
DTYPE_OF_STORAGE_CLASS = {name: dt for dt, name in STORAGE_CLASS.items()}

#: PyTorch storage classes opweave has no dtype for (a file holding one cannot be loaded)
UNSUPPORTED_STORAGE_CLASSES = frozenset({"ComplexHalfStorage", "QUInt4x2Storage", "QUInt2x4Storage"})

#: every opweave dtype under its PyTorch name (``torch.float32`` ...); PyTorch's names are opweave's
TORCH_DTYPES = {d.name: d for d in (*_dtype.ALL_DTYPES, *_dtype.QUANTIZED_DTYPES)}

#: PyTorch dtypes opweave does not have: a file using one fails to load with a message naming it
UNSUPPORTED_TORCH_DTYPES = frozenset(
    {
        "uint16",
        "uint32",
        "uint64",
        "complex32",
        "chalf",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float4_e2m1fn_x2",
        "quint4x2",
        "quint2x4",
        "bits1x8",
        "bits2x4",
        "bits4x2",
        "bits8",
        "bits16",
        *(f"uint{i}" for i in range(1, 8)),
        *(f"int{i}" for i in range(1, 8)),
    }
)

QSCHEMES = {q.name: q for q in _quantized.QSCHEMES}
UNSUPPORTED_QSCHEMES = frozenset({"per_channel_affine_float_qparams"})

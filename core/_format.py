"""Tensor repr, character for character like PyTorch's (``torch/_tensor_str.py``).

The values are read once to the host (``t.cpu().numpy()``) and formatted with
NumPy and Python's ``format``: fixed point with ``precision`` digits, integer
mode (``1.``) when every finite value is whole, scientific notation when the
largest and smallest nonzero magnitudes are more than 1000 apart, the largest
is above 1e8 or the smallest below 1e-4 (or as ``sci_mode`` forces), columns
padded to a common width, lines wrapped at ``linewidth``, and tensors with
more than ``threshold`` elements summarized with ``...`` keeping ``edgeitems``
at each edge. Suffixes follow: ``device=`` off the CPU, ``size=`` for empty
and meta tensors, ``dtype=`` unless it is implied by the values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import _dtype


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors, as ``torch.set_printoptions``.

    ``precision``: digits after the point (default 4); ``threshold``: element
    count above which tensors are summarized (default 1000); ``edgeitems``:
    items kept at each edge of a summarized dim (default 3); ``linewidth``:
    characters per line (default 80); ``profile``: "default", "short" or
    "full" presets, overridden by the other arguments; ``sci_mode``: force
    (True) or forbid (False) scientific notation, None to choose
    automatically (every call resets it unless given).
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}; expected one of {sorted(_PROFILES)}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict that ``set_printoptions(**d)`` accepts."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# -- entry point ----------------------------------------------------------------


def format_tensor(t) -> str:
    """``repr(t)``: ``tensor([...])`` followed by the device, size and dtype suffixes PyTorch shows."""
    if getattr(t, "is_quantized", False):
        return _format_quantized(t)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _dtype.get_default_dtype()
    default_complex = _dtype.complex128 if default is _dtype.float64 else _dtype.complex64
    implied = t.dtype in (default, default_complex, _dtype.int64, _dtype.bool_)
    dtype_suffix = f"dtype={t.dtype}"
    if t.device.type == "meta":
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default:
            suffixes.append(dtype_suffix)
        body = "..."
    elif t.numel() == 0:
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default:
            suffixes.append(dtype_suffix)
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if not implied:
            suffixes.append(dtype_suffix)
        summarize = t.numel() > PRINT_OPTS.threshold
        body = _tensor_str(_host_values(t, summarize), tuple(t.shape), summarize, indent)
    return _add_suffixes(prefix + body, suffixes, indent)


def _format_quantized(t) -> str:
    """A quantized tensor as PyTorch prints it: the dequantized values, then dtype and quantization parameters."""
    qp = t._qparams
    text = format_tensor(t.dequantize())
    text = text[: text.rfind(")")] if text.endswith(")") else text
    extra = [f"size={tuple(t.shape)}", f"dtype={t.dtype}", f"quantization_scheme={qp.qscheme}"]
    if qp.per_channel_scheme:
        extra += [f"scale={list(qp.scales)}", f"zero_point={list(qp.zero_points)}", f"axis={qp.axis}"]
    else:
        extra += [f"scale={qp.scale}", f"zero_point={qp.zero_point}"]
    return _add_suffixes(text, extra, len("tensor("))


def _host_values(t, summarize: bool) -> np.ndarray:
    """The elements to print, on the host, in a NumPy dtype Python formats exactly (float64 for real floats).

    A summarized tensor keeps only its edges (``edgeitems`` per side of every long dim), taken before the
    dtype conversion so that printing a large CPU tensor copies only what is shown.
    """
    array = t.cpu().numpy()
    if summarize:
        array = _summarized(array)
    dt = t.dtype
    with np.errstate(invalid="ignore"):  # a signalling nan widens to a quiet one, printed as nan without a warning
        if dt.is_complex:
            return array.astype(np.complex128)
        if dt.is_floating_point:
            if dt.is_float8:  # PyTorch prints float8 through float16
                array = array.astype(np.float16)
            return array.astype(np.float64)
    return array


# -- formatting -----------------------------------------------------------------


class _Formatter:
    """Width and style of every element of one (summarized) tensor, as PyTorch's ``_Formatter``."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            if flat.size:
                candidates = {flat.max().item(), flat.min().item()}
                self.max_width = max(len(str(v)) for v in candidates)
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite)
        lo, hi = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        # Within one sign, a formatted value's length is monotone in its magnitude except for the
        # exponent's digit count, which peaks at the extremes: the widest is one of these four.
        candidates = set()
        for part in (finite[finite > 0], finite[finite < 0]):
            if part.size:
                candidates.update((float(part.min()), float(part.max())))
        p = PRINT_OPTS.precision
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in candidates)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in candidates)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in candidates)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _complex_text(value, real: _Formatter, imag: _Formatter) -> str:
    real_text = real.format(value.real)
    imag_text = (imag.format(value.imag) + "j").lstrip()
    if imag_text[0] in "+-":
        return real_text + imag_text
    return real_text + "+" + imag_text


def _element_text(value, f1: _Formatter, f2: _Formatter | None) -> str:
    return f1.format(value) if f2 is None else _complex_text(value, f1, f2)


def _vector_str(a: np.ndarray, size: int, indent: int, summarize: bool, f1, f2) -> str:
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and size > 2 * edge:  # ``a`` holds the edges only
        head = [_element_text(v, f1, f2) for v in a[:edge].tolist()]
        tail = [_element_text(v, f1, f2) for v in a[-edge:].tolist()]
        data = head + [" ..."] + tail
    else:
        data = [_element_text(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: np.ndarray, sizes: tuple, indent: int, summarize: bool, f1, f2=None) -> str:
    """``a`` printed as a tensor of shape ``sizes`` (``a`` holds only the edges of the summarized dims)."""
    if not sizes:
        return _element_text(a.item(), f1, f2)
    if len(sizes) == 1:
        return _vector_str(a, sizes[0], indent, summarize, f1, f2)
    edge = PRINT_OPTS.edgeitems
    n = sizes[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(edge, 2 * edge))
    else:
        rows = list(range(n))
    slices = ["..." if i is None else _nested_str(a[i], sizes[1:], indent + 1, summarize, f1, f2) for i in rows]
    return "[" + ("," + "\n" * (len(sizes) - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows: ``edgeitems`` at each end of every longer dim."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if not edge:  # only "..." is printed
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            a = a.take(np.r_[0:edge, n - edge : n], axis=axis)
    return a


def _tensor_str(a: np.ndarray, sizes: tuple, summarize: bool, indent: int) -> str:
    if a.dtype.kind == "c":
        return _nested_str(a, sizes, indent, summarize, _Formatter(a.real), _Formatter(a.imag))
    return _nested_str(a, sizes, indent, summarize, _Formatter(a))


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)

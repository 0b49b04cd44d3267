"""x86 int8 kernels for the quantized ops, on oneDNN (``pip install "opweave[x86quant]"``).

A feature plugin: it provides no device. Loaded through the entry point group
``opweave.backends`` when the quantized engine is read (``opweave.backends.quantized``) or
the first quantized op runs, it declares the quantized engine ``"x86"`` and, when oneDNN
loads and the CPU has int8 dot products (AVX512-VNNI, AVX-VNNI or AMX), registers its kernels
at (Quantized, "cpu") (see :mod:`.kernels`). Otherwise it registers no kernel, the engine is
declared unavailable with the reason, and the reference kernels serve.

``is_available()`` / ``unavailable_reason()`` say which; ``opweave.backends.status()`` shows the
plugin as a feature with the same reason.
"""

from __future__ import annotations

import opweave

ENGINE = "x86"
NAME = "x86quant"

#: What the conformance suite may expect from the quantized ops on the CPU when this engine serves them.
#: quint8 / qint8 outputs (compared on their integers) may differ from an exact oracle by one step:
#: oneDNN requantizes ``acc * sx * sw / sy + bias / sy`` in float32, so a value within float32 rounding of
#: a half-integer may round the other way. Accumulators are exact int32 sums, so nothing else differs.
#: linear_dynamic's float32 output (``acc * sx * sw + bias`` in float32) stays within the float32 default.
CONFORMANCE = {
    "tolerances": {"quint8": (0.0, 1.0), "qint8": (0.0, 1.0)},
    "xfail": {},
    "skip_dtypes": [],
}

__all__ = [
    "CONFORMANCE",
    "ENGINE",
    "describe",
    "is_available",
    "linear_primitive",
    "opweave_conformance_config",
    "opweave_register",
    "unavailable_reason",
]


def is_available() -> bool:
    """Whether the x86 engine can run here (oneDNN loads and the CPU has VNNI or AMX)."""
    from ._onednn import availability

    return availability()[0]


def unavailable_reason() -> str | None:
    """Why :func:`is_available` is False (None when it is True)."""
    from ._onednn import availability

    return availability()[1]


def describe() -> str:
    """The library in use (version, ISA, path), or the reason it is not."""
    from ._onednn import Unavailable, library

    try:
        return library().describe()
    except Unavailable as exc:
        return f"unavailable: {exc}"


def linear_primitive(X, W_prepack, Y_scale_i: float, Y_zero_point_i: int):
    """``(run, implementation)`` for ``quantized::linear(X, W_prepack, Y_scale_i, Y_zero_point_i)``.

    ``run()`` executes the oneDNN primitive alone, on buffers bound once, and returns the quint8 integers
    of the output (one array, overwritten by each run), so ``bench/quant.py`` can tell the plugin's
    per-call work from the library's. ``implementation`` is oneDNN's name for the kernel it chose
    (``brg:avx512_core_amx``, ``brg:avx512_core_vnni``, ...).
    Raises ``RuntimeError`` when the engine cannot run this call.
    """
    import numpy as np

    from ._onednn import library
    from ._prepack import linear_pack

    library()
    pack = linear_pack(W_prepack)
    if not pack.supported:
        raise RuntimeError(f"linear_primitive: the x86 engine cannot run this weight: {pack.reason}")
    x = X.int_repr().numpy().reshape(-1, pack.in_features)
    exe, buffers, out = pack.bind(x, X.q_scale(), X.q_zero_point(), np.uint8, Y_scale_i, Y_zero_point_i)
    if exe is None:
        raise RuntimeError("linear_primitive: X has no rows")

    def run():
        exe.run(buffers)
        return out.reshape(*X.shape[:-1], pack.out_features)

    return run, exe.impl


@opweave.hookimpl
def opweave_register(registry):
    """Declare the ``"x86"`` quantized engine; register its kernels at (Quantized, "cpu") when it can run."""
    from opweave.quantization import register_engine

    from ._onednn import availability

    available, reason = availability()
    feature = getattr(registry, "feature", None)
    if feature is not None:
        feature(NAME, available, reason)
    if available:
        from . import kernels

        kernels.register(registry)
    register_engine(ENGINE, available, reason)


@opweave.hookimpl
def opweave_conformance_config(backend):
    """Tolerances for the quantized ops on the CPU (see :data:`CONFORMANCE`); None for other backends."""
    if backend == "cpu" and is_available():
        return CONFORMANCE
    return None

"""opweave: a tensor framework whose core knows no hardware.

The core defines tensors, dtypes, operator schemas (prims and canonical ops)
and dispatch keys; devices arrive as plugins (entry point group
``opweave.backends``). See ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib as _importlib

import numpy as _np

from . import _backends, _dtype, _plugins
from ._device import device, get_default_device, set_default_device
from ._dtype import (
    ALL_DTYPES,
    bfloat16,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    qint8,
    qint32,
    quint8,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from ._hookspecs import hookimpl, hookspec
from ._quantized import per_channel_affine, per_channel_symmetric, per_tensor_affine, per_tensor_symmetric
from ._tensor import Size, Tensor

bool = _dtype.bool_  # noqa: A001 - torch-style dtype names
float = float32  # noqa: A001
int = int32  # noqa: A001


from ._errors import IndexOutOfBoundsError, OutOfMemoryError  # noqa: E402


def dtype_of_numpy(np_dtype: _np.dtype) -> dtype:
    """The opweave dtype stored as the NumPy dtype ``np_dtype``."""
    found = _NP_CACHE.get(np_dtype)
    if found is None:
        found = _NP_CACHE[np_dtype] = _dtype.from_numpy(np_dtype)
    return found


_NP_CACHE: dict = {}

from . import (  # noqa: E402
    _c10d,  # noqa: E402,F401  (defines the c10d:: collectives; their kernels load with opweave.distributed)
    _meta,  # noqa: E402
    backends,
    dispatch,
    library,
    ops,
)
from . import prims as _prims  # noqa: E402,F401  (defines the prim catalog)
from . import refs as _refs  # noqa: E402,F401  (defines the canonical ops)
from ._factories import as_tensor, from_dlpack, from_numpy, tensor  # noqa: E402
from ._format import set_printoptions  # noqa: E402
from ._methods import install as _install_methods  # noqa: E402
from .backends import kernel as _kernel_api  # noqa: E402,F401  (opweave.backends.kernel, once prims exist)

_backends.register_builtin(_meta.backend())
_install_methods(globals())
from ._tensor_compat import (  # noqa: E402  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from ._tensor_compat import install as _install_tensor_compat  # noqa: E402

_install_tensor_compat()
from . import functional  # noqa: E402
from .functional import install as _install_functional  # noqa: E402

_install_functional(globals())
from .lowrank import install as _install_lowrank  # noqa: E402

_install_lowrank(globals())
from . import autograd  # noqa: E402  (the Autograd layer, Tensor.backward, requires_grad= on factories)
from .autograd import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,  # noqa: E402
)

autograd._install(globals())

# Global modes: deterministic algorithms, float32 matmul precision. opweave.quantization defines the
# quantized:: ops and registers the Quantized-layer kernels (its observers and flow load on first use).
from . import errors, quantization, return_types  # noqa: E402
from ._autocast import autocast, autocast_policy, get_autocast_dtype, is_autocast_enabled  # noqa: E402
from ._modes import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)

# Random number generation (importing the submodule also binds ``opweave.random`` to it, not to the op packet).
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402

# Submodules imported on first use (PEP 562): ``opweave.nn``, ``from opweave import nn`` and
# ``import opweave.nn`` all work; ``import opweave`` does not pay for them.
_LAZY_SUBMODULES = frozenset(
    {
        "distributed",
        "fft",
        "linalg",
        "masked",
        "nn",
        "optim",
        "profiler",
        "safetensors",
        "serialization",
        "signal",
        "special",
        "utils",
    }
)
# Names defined by a lazy submodule: saving and loading in PyTorch's zip format, safe by default
# (docs/serialization.md).
_LAZY_NAMES = {"load": "serialization", "save": "serialization"}


def _version() -> str:
    import importlib.metadata  # deferred: reading the installed distributions costs ~20 ms

    try:
        return importlib.metadata.version("opweave")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0.0.0"


def __getattr__(name: str):
    """The lazily imported submodules and their names, ``__version__``, and ``opweave.<device type>``:
    the device module its plugin registered (``opweave.opencl.synchronize()``)."""
    if name == "__version__":
        version = globals()["__version__"] = _version()
        return version
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    owner = _LAZY_NAMES.get(name)
    if owner is not None:
        value = getattr(_importlib.import_module(f"{__name__}.{owner}"), name)
        globals()[name] = value
        return value
    return _plugins.device_module(name)


def __dir__() -> list[str]:
    """The module's names, the submodules imported on first use and the device modules registered so far."""
    return sorted({*globals(), *_LAZY_SUBMODULES, *_LAZY_NAMES, "__version__", *_plugins.device_module_names()})

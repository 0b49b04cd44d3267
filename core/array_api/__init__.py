"""``opweave.array_api``: the Python array API standard (2024.12) over opweave tensors.

``tensor.__array_namespace__()`` returns this module, so libraries written against the standard
(SciPy's and scikit-learn's array-API support, ``array_api_compat``) accept opweave tensors. The
arrays are ordinary ``opweave.Tensor`` objects; the functions here follow the standard where it
differs from PyTorch (names, ``axis=`` keywords, type promotion without 0-d special cases,
``copy=`` semantics). ``docs/array-api.md`` lists the differences.
"""

from __future__ import annotations

import builtins
import math

from .._dtype import bool_ as bool  # noqa: A001
from .._dtype import complex64, complex128, float32, float64, int8, int16, int32, int64, uint8
from . import fft, linalg
from ._creation import *  # noqa: F403
from ._creation import __all__ as _creation_all
from ._dtypes import can_cast, finfo, iinfo, isdtype, result_type
from ._elementwise import *  # noqa: F403
from ._elementwise import __all__ as _elementwise_all
from ._info import __array_namespace_info__
from ._linear_algebra import matmul, tensordot, vecdot
from ._manipulation import *  # noqa: F403
from ._manipulation import __all__ as _manipulation_all
from ._reductions import *  # noqa: F403
from ._reductions import __all__ as _reductions_all
from ._searching import *  # noqa: F403
from ._searching import __all__ as _searching_all

__array_api_version__ = "2024.12"

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None


def astype(x, dtype, /, *, copy: builtins.bool = True, device=None):
    """``x`` converted to ``dtype`` (and ``device``); ``copy=False`` returns ``x`` when nothing changes."""
    out = x.to(dtype=dtype, device=device if device is not None else x.device)
    return out.clone() if copy and out is x else out


__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "astype",
    "bool",
    "can_cast",
    "complex64",
    "complex128",
    "e",
    "fft",
    "finfo",
    "float32",
    "float64",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "linalg",
    "matmul",
    "nan",
    "newaxis",
    "pi",
    "result_type",
    "tensordot",
    "uint8",
    "vecdot",
    *_creation_all,
    *_elementwise_all,
    *_manipulation_all,
    *_reductions_all,
    *_searching_all,
]

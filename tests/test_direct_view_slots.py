"""The direct view paths (``_fastpaths`` for ``t[i:j]``, ``_views`` for ``t.view``, ``t.t()``...) fill a new
Tensor's fields inline, each on its own; every slot of Tensor must be set, as ``Tensor._make`` sets it."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from opweave._tensor import Tensor

_SLOTS = [name for name in Tensor.__slots__ if name != "__weakref__"]
# name -> (the view, its NumPy counterpart)
_VIEWS = {
    "slice": (lambda t: t[1:3], lambda a: a[1:3]),
    "view": (lambda t: t.view(16), lambda a: a.reshape(16)),
    "t": (lambda t: t.t(), lambda a: a.T),
    "transpose": (lambda t: t.transpose(0, 1), lambda a: a.swapaxes(0, 1)),
    "unsqueeze": (lambda t: t.unsqueeze(0), lambda a: a[None]),
}


@pytest.mark.parametrize("name", list(_VIEWS))
@pytest.mark.parametrize("of_a_view", [False, True], ids=["of-a-base", "of-a-view"])
def test_a_direct_view_sets_every_slot_as_a_plain_view(name, of_a_view):
    data = np.arange(32.0, dtype=np.float32).reshape(2, 4, 4)
    root = ow.tensor(data)
    t = root[1] if of_a_view else ow.tensor(data[0])
    make, numpy_view = _VIEWS[name]
    make(t)  # the first call of a view method runs the general path and records the layout
    v = make(t)
    values = {slot: getattr(v, slot) for slot in _SLOTS}  # an unset slot raises AttributeError
    assert values["_st"] is t._storage
    assert values["_base"] is (root if of_a_view else t)
    assert (values["_dtype"], values["_device"], values["_keys"]) == (t._dtype, t._device, t._keys)
    assert values["_native"] is None and values["_ag"] is None and values["_qparams"] is None
    assert values["_wrapped_number"] is False
    np.testing.assert_array_equal(v.numpy(), numpy_view(data[1] if of_a_view else data[0]))

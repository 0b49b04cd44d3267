"""``opweave.load(opweave.save(x))`` gives ``x`` back bit for bit, views still sharing their storage."""

from __future__ import annotations

import collections
import io
import math
import pickle

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from serialization_support import (
    DATA_DEVICES,
    DEVICES,
    assert_aliasing_kept,
    assert_same,
    device_dtypes,
    raw_bytes,
    roundtrip,
    saved_bytes,
    tensors,
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.complex_numbers(allow_nan=False),
)


@st.composite
def nested_objects(draw, device):
    """Containers (dict, OrderedDict, list, tuple) of tensors of every dtype the device has, views included."""
    dtypes = device_dtypes(device) if device != "meta" else device_dtypes("cpu")
    bases = [draw(tensors(draw(st.sampled_from(dtypes)), device)) for _ in range(draw(st.integers(1, 3)))]
    pool = list(bases)
    for b in bases:
        if b.ndim >= 1 and b.shape[0] >= 2:
            pool.append(b[1:])  # a view with an offset, sharing b's storage
        if b.ndim >= 2:
            pool.append(b.transpose(0, 1))
    leaves = st.one_of(st.sampled_from(pool), _SCALARS)
    keys = st.one_of(st.text(max_size=6), st.integers(-3, 3))

    def containers(children):
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=4).map(tuple),
            st.dictionaries(keys, children, max_size=4),
            st.dictionaries(st.text(max_size=6), children, max_size=4).map(lambda d: collections.OrderedDict(d)),
        )

    return draw(st.recursive(leaves, containers, max_leaves=10))


@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data())
def test_nested_roundtrip_bit_exact_with_views(device, data):
    obj = data.draw(nested_objects(device))
    pairs = []
    assert_same(roundtrip(obj), obj, pairs)
    assert_aliasing_kept(pairs)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_every_dtype_with_special_values(device):
    obj = {}
    for dt in device_dtypes(device):
        if dt is ow.bool:
            host = np.array([True, False, True])
        else:
            # every byte value: NaNs with payloads, -0.0, infinities, subnormals for the floating types
            host = np.frombuffer(np.arange(256 * dt.itemsize, dtype=np.uint32).astype(np.uint8).tobytes(), dt.numpy)
        obj[dt.name] = ow.from_numpy(host.copy()).to(device)
        obj[dt.name + "_0dim"] = ow.from_numpy(host[:1].reshape(()).copy()).to(device)
        obj[dt.name + "_empty"] = ow.empty(0, 3, dtype=dt, device=device)
    loaded = roundtrip(obj)
    assert_same(loaded, obj)
    for key, t in obj.items():
        assert raw_bytes(loaded[key]) == raw_bytes(t)


def test_views_of_one_storage_stay_one_storage():
    base = ow.arange(24.0)
    views = {
        "base": base,
        "grid": base.view(4, 6),
        "T": base.view(4, 6).mT,
        "step": base[::3],
        "tail": base[7:],
        "strided": ow.as_strided(base, (3, 2), (1, 5), 4),
        "expanded": base[3:4].expand(3, 2),
    }
    loaded = roundtrip(views)
    storage = loaded["base"].untyped_storage()
    for key, t in views.items():
        assert loaded[key].untyped_storage() is storage, key
        assert loaded[key].stride() == t.stride() and loaded[key].storage_offset() == t.storage_offset()
        np.testing.assert_array_equal(loaded[key].numpy(), t.numpy())
    loaded["grid"][1, 1] = -1.0  # a write through one view is seen by the others
    assert loaded["base"][7].item() == -1.0 and loaded["T"][1, 1].item() == -1.0
    assert len(pickle_storages(saved_bytes(views))) == 1


def pickle_storages(archive: bytes) -> list[str]:
    from serialization_support import records

    return [n for n in records(archive) if "/data/" in n]


def test_one_storage_viewed_as_two_dtypes_is_saved_once():
    z = ow.tensor([1 + 2j, -0.0 - 3j], dtype=ow.complex64)
    r = ow.view_as_real(z)
    loaded = roundtrip([z, r])
    assert loaded[0].untyped_storage() is loaded[1].untyped_storage()
    assert raw_bytes(loaded[1]) == raw_bytes(r) and loaded[0].dtype is ow.complex64
    assert len(pickle_storages(saved_bytes([z, r]))) == 1


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_quantized_per_tensor_and_per_channel(device):
    x = ow.tensor([[-1.0, 0.0, 0.5, 2.0], [3.25, -0.75, 1.5, 10.0]])
    obj = {
        "pt_quint8": ow.quantize_per_tensor(x, 0.05, 7, ow.quint8),
        "pt_qint8": ow.quantize_per_tensor(x, 0.1, -3, ow.qint8),
        "pt_qint32": ow.quantize_per_tensor(x, 0.001, 11, ow.qint32),
        "pc_axis0": ow.quantize_per_channel(
            x, ow.tensor([0.1, 0.05], dtype=ow.float64), ow.tensor([0, 2]), 0, ow.qint8
        ),
        "pc_axis1": ow.quantize_per_channel(
            x, ow.tensor([0.1, 0.2, 0.3, 0.4], dtype=ow.float64), ow.tensor([1, 2, 3, 4]), 1, ow.quint8
        ),
    }
    obj = {k: v.to(device) for k, v in obj.items()} if device != "cpu" else obj
    obj["pt_T"] = obj["pt_qint8"].mT
    loaded = roundtrip(obj)
    assert_same(loaded, obj)
    assert loaded["pt_T"].untyped_storage() is loaded["pt_qint8"].untyped_storage()
    expected = np.clip(np.round(x.numpy() / 0.05) + 7, 0, 255)
    np.testing.assert_array_equal(loaded["pt_quint8"].int_repr().numpy(force=True), expected)


def test_state_dict_shapes_as_pytorch_makes_them():
    """Module and optimizer state_dicts: OrderedDicts with ``_metadata``, int keys, tuples, floats, None."""
    weights = collections.OrderedDict(
        [("0.weight", ow.arange(12.0).reshape(4, 3)), ("0.bias", ow.zeros(4)), ("1.num_batches_tracked", ow.tensor(3))]
    )
    weights._metadata = collections.OrderedDict([("", {"version": 1}), ("1", {"version": 2})])
    optimizer = {
        "state": {0: {"step": ow.tensor(1.0), "exp_avg": ow.ones(4, 3), "exp_avg_sq": ow.zeros(4, 3)}},
        "param_groups": [
            {
                "lr": 1e-3,
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "weight_decay": 0,
                "amsgrad": False,
                "foreach": None,
                "params": [0, 1, 2],
            }
        ],
    }
    loaded = roundtrip({"model": weights, "optimizer": optimizer, "epoch": 3})
    assert_same(loaded, {"model": weights, "optimizer": optimizer, "epoch": 3})
    assert type(loaded["model"]) is collections.OrderedDict
    assert loaded["model"]._metadata == weights._metadata


def test_devices_sizes_dtypes_and_qschemes_round_trip():
    obj = [
        ow.float8_e5m2,
        ow.bfloat16,
        ow.device("cpu"),
        ow.device("opencl", 1),
        ow.Size([2, 0, 3]),
        ow.per_channel_affine,
    ]
    loaded = roundtrip(obj)
    assert loaded == obj and type(loaded[4]) is ow.Size and loaded[5] is ow.per_channel_affine


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(protocol):
    obj = {"a": ow.arange(5), "b": [ow.tensor(1.5), "x" * 300, b"y" * 300, {1, 2}, frozenset({3})]}
    buf = io.BytesIO()
    ow.save(obj, buf, pickle_protocol=protocol)
    buf.seek(0)
    assert_same(ow.load(buf), obj)


def test_a_tensor_twice_is_one_object():
    t = ow.arange(3)
    loaded = roundtrip([t, t, {"again": t}])
    assert loaded[0] is loaded[1] is loaded[2]["again"]


def test_mixed_devices_in_one_file():
    obj = {d: ow.arange(4.0, device=d) for d in DEVICES}
    loaded = roundtrip(obj)
    for d in DEVICES:
        assert loaded[d].device == obj[d].device


def test_save_to_path_and_file_object(tmp_path):
    t = {"w": ow.arange(6).reshape(2, 3)}
    ow.save(t, tmp_path / "model.pt")
    with open(tmp_path / "model.pt", "rb") as f:
        assert_same(ow.load(f), t)
    assert_same(ow.load(str(tmp_path / "model.pt")), t)


def test_save_bad_arguments_leave_the_file_untouched(tmp_path):
    path = tmp_path / "keep.pt"
    path.write_bytes(b"old")
    with pytest.raises(TypeError, match="pickle_protocol"):
        ow.save({}, path, pickle_protocol="2")
    with pytest.raises(ValueError, match="pickle_protocol"):
        ow.save({}, path, pickle_protocol=1)
    with pytest.raises(ValueError, match="pickle_protocol"):
        ow.save({}, path, pickle, 1)
    with pytest.raises(TypeError, match="path or a writable"):
        ow.save({}, 42)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ow.save({"f": lambda: 1}, path)
    assert path.read_bytes() == b"old"


def test_nan_and_signed_zero_scalars_keep_their_bits():
    obj = [math.nan, -0.0, float("inf")]
    loaded = roundtrip(obj)
    assert math.isnan(loaded[0]) and math.copysign(1, loaded[1]) == -1 and loaded[2] == math.inf


def test_streams_that_cannot_seek():
    class Sink:
        def __init__(self):
            self.data = bytearray()

        def write(self, chunk):
            self.data += bytes(chunk)
            return len(chunk)

        def flush(self):
            pass

    class Source(io.RawIOBase):
        def __init__(self, data):
            self._f = io.BytesIO(data)

        def readable(self):
            return True

        def seekable(self):
            return False

        def readinto(self, buf):
            return self._f.readinto(buf)

    obj = {"a": ow.arange(100.0), "view": ow.arange(100.0)[3:]}
    sink = Sink()
    ow.save(obj, sink)
    assert_same(ow.load(Source(bytes(sink.data))), obj)


def test_parameters_and_requires_grad_survive_a_roundtrip():
    """As ``torch.save``: a Parameter comes back a Parameter, ``requires_grad`` is kept, hooks and history are not."""
    weight = ow.nn.Parameter(ow.arange(6.0).reshape(2, 3))
    frozen = ow.nn.Parameter(ow.ones(2), requires_grad=False)
    leaf = ow.tensor([1.0, -2.0], requires_grad=True)
    loaded = roundtrip({"weight": weight, "frozen": frozen, "leaf": leaf, "result": leaf * 3, "plain": ow.zeros(2)})
    assert type(loaded["weight"]) is ow.nn.Parameter and loaded["weight"].requires_grad
    assert type(loaded["frozen"]) is ow.nn.Parameter and not loaded["frozen"].requires_grad
    for name in ("leaf", "result"):
        assert type(loaded[name]) is ow.Tensor and loaded[name].requires_grad and loaded[name].is_leaf
    assert not loaded["plain"].requires_grad
    assert loaded["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert loaded["result"].tolist() == [3.0, -6.0]

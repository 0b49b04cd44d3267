"""The x86 engine: selection, loading, prepacked weights reuse, errors, and what happens without oneDNN."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("cffi")
onednn = pytest.importorskip("opweave_x86quant._onednn")

import opweave as ow  # noqa: E402
from opweave.ops import quantized  # noqa: E402

AVAILABLE, REASON = onednn.availability()
needs_x86 = pytest.mark.skipif(not AVAILABLE, reason=f"x86 engine unavailable: {REASON}")


@pytest.fixture(autouse=True)
def default_engine(monkeypatch):
    """Start from the default engine (no selection in the environment) and leave it so."""
    monkeypatch.delenv("OPWEAVE_QUANTIZED_ENGINE", raising=False)
    ow.quantization._engine.reset_engine()
    yield
    ow.quantization._engine.reset_engine()


def qtensor(ints, scale, zero_point):
    return ow._make_per_tensor_quantized_tensor(ow.tensor(np.asarray(ints)), scale, zero_point)


def layer(m=3, k=8, n=5, seed=0):
    rng = np.random.default_rng(seed)
    x = qtensor(rng.integers(0, 256, (m, k), dtype=np.uint8), 0.05, 3)
    w = qtensor(rng.integers(-128, 128, (n, k), dtype=np.int8), 0.02, 0)
    return x, quantized.linear_prepack(w, ow.tensor(rng.standard_normal(n).astype(np.float32)))


@needs_x86
def test_x86_is_the_default_engine_and_reference_is_supported():
    flags = ow.backends.quantized
    assert flags.engine == "x86"
    assert flags.supported_engines == ["reference", "x86"]


@needs_x86
def test_engine_switch_makes_the_reference_serve(monkeypatch):
    from opweave_x86quant import _prepack

    x, packed = layer()
    ow.backends.quantized.engine = "x86"
    fast = quantized.linear(x, packed, 0.1, 10)

    def refuse(*args, **kwargs):
        raise AssertionError("the x86 kernel ran")

    monkeypatch.setattr(_prepack.LinearPack, "run", refuse)
    ow.backends.quantized.engine = "reference"
    slow = quantized.linear(x, packed, 0.1, 10)
    assert np.abs(fast.int_repr().numpy().astype(int) - slow.int_repr().numpy()).max() <= 1
    ow.backends.quantized.engine = "x86"
    with pytest.raises(AssertionError, match="x86 kernel ran"):
        quantized.linear(x, packed, 0.1, 10)


def test_unknown_engine_is_refused():
    with pytest.raises(RuntimeError, match="unknown"):
        ow.backends.quantized.engine = "fbgemm"


@needs_x86
def test_prepack_reorders_once_and_later_calls_reuse_it():
    x, packed = layer(k=64, n=48)
    pack = packed.backend_cache["x86"]
    assert pack.layouts.reorders == 1  # made by the prepack op itself
    for m in (1, 3, 17, 3):
        rng = np.random.default_rng(m)
        quantized.linear(qtensor(rng.integers(0, 256, (m, 64), dtype=np.uint8), 0.05, 3), packed, 0.1, 10)
    assert packed.backend_cache["x86"] is pack
    assert pack.layouts.reorders == 1
    assert len(pack._executables) == 3  # one primitive per row count


@needs_x86
def test_prepack_under_the_reference_engine_packs_lazily():
    ow.backends.quantized.engine = "reference"
    x, packed = layer()
    assert "x86" not in packed.backend_cache
    ow.backends.quantized.engine = "x86"
    quantized.linear(x, packed, 0.1, 10)
    assert packed.backend_cache["x86"].layouts.reorders == 1


@needs_x86
def test_linear_primitive_runs_the_kernel_the_op_uses():
    import opweave_x86quant

    rng = np.random.default_rng(5)
    x = qtensor(rng.integers(0, 256, (2, 3, 16), dtype=np.uint8), 0.05, 3)
    w = qtensor(rng.integers(-128, 128, (7, 16), dtype=np.int8), 0.02, 0)
    packed = quantized.linear_prepack(w)
    run, implementation = opweave_x86quant.linear_primitive(x, packed, 0.1, 10)
    assert implementation == packed.backend_cache["x86"].executable(6, np.uint8, np.uint8, False)[0].impl
    expected = quantized.linear(x, packed, 0.1, 10).int_repr().numpy()
    out = run()
    assert out.shape == (2, 3, 7) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, expected)
    out[...] = 0
    np.testing.assert_array_equal(run(), expected)


@needs_x86
def test_linear_primitive_refuses_weights_the_engine_cannot_run():
    import opweave_x86quant

    w = ow.quantize_per_channel(ow.ones(2, 4), ow.tensor([0.1, 0.2], dtype=ow.float64), ow.tensor([0, 1]), 0, ow.qint8)
    x = qtensor(np.zeros((1, 4), np.uint8), 0.05, 3)
    with pytest.raises(RuntimeError, match="linear_primitive.*zero points"):
        opweave_x86quant.linear_primitive(x, quantized.linear_prepack(w), 0.1, 10)


@needs_x86
def test_concurrent_calls_agree():
    x, packed = layer(m=32, k=96, n=40)
    want = quantized.linear(x, packed, 0.1, 10).int_repr().numpy()
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(quantized.linear(x, packed, 0.1, 10).int_repr().numpy())
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 20 and all(np.array_equal(r, want) for r in results)


# -- errors: the same as the reference's, inputs intact -----------------------------------------------------------


def _error_of(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc), str(exc)
    return None


@needs_x86
@pytest.mark.parametrize(
    "case",
    [
        "float_activation",
        "wrong_features",
        "qint8_activation",
        "bad_scale",
        "bad_zero_point",
        "not_packed",
        "per_channel_activation",
    ],
)
def test_linear_errors_match_the_reference(case):
    x, packed = layer()
    args = {"X": x, "W_prepack": packed, "scale": 0.1, "zp": 10}
    if case == "float_activation":
        args["X"] = ow.ones(3, 8)
    elif case == "wrong_features":
        args["X"] = qtensor(np.zeros((3, 7), np.uint8), 0.1, 0)
    elif case == "qint8_activation":
        args["X"] = qtensor(np.zeros((3, 8), np.int8), 0.1, 0)
    elif case == "bad_scale":
        args["scale"] = -1.0
    elif case == "bad_zero_point":
        args["zp"] = 300
    elif case == "not_packed":
        args["W_prepack"] = "weights"
    elif case == "per_channel_activation":
        args["X"] = ow.quantize_per_channel(
            ow.ones(3, 8), ow.tensor([0.1, 0.2, 0.3]), ow.tensor([0, 0, 0]), 0, ow.quint8
        )
    before = args["X"].numpy().copy() if not args["X"].is_quantized else args["X"].int_repr().numpy().copy()

    def call():
        return quantized.linear(args["X"], args["W_prepack"], args["scale"], args["zp"])

    ow.backends.quantized.engine = "x86"
    fast = _error_of(call)
    ow.backends.quantized.engine = "reference"
    slow = _error_of(call)
    assert fast is not None and fast == slow
    assert issubclass(fast[0], (TypeError, ValueError))
    after = args["X"].numpy() if not args["X"].is_quantized else args["X"].int_repr().numpy()
    np.testing.assert_array_equal(after, before)


@needs_x86
def test_matmul_and_conv_errors_match_the_reference():
    a = qtensor(np.zeros((2, 3), np.uint8), 0.1, 0)
    b = qtensor(np.zeros((4, 2), np.uint8), 0.1, 0)
    s8 = qtensor(np.zeros((3, 2), np.int8), 0.1, 0)
    w = qtensor(np.zeros((2, 1, 2, 2), np.int8), 0.1, 0)
    packed = quantized.conv2d_prepack(w, None, [1], [0], [1], 1)
    calls = [
        lambda: quantized.matmul(a, b, 0.1, 0),  # inner dims differ
        lambda: quantized.matmul(a, s8, 0.1, 0),  # dtypes differ
        lambda: quantized.conv2d(qtensor(np.zeros((1, 2, 4, 4), np.uint8), 0.1, 0), packed, 0.1, 0),  # channels
        lambda: quantized.conv2d(qtensor(np.zeros((1, 1, 4, 4), np.uint8), 0.1, 0), packed, 0.0, 0),  # scale
    ]
    for call in calls:
        ow.backends.quantized.engine = "x86"
        fast = _error_of(call)
        ow.backends.quantized.engine = "reference"
        slow = _error_of(call)
        assert fast is not None and fast == slow


# -- status, conformance expectations, and a machine without oneDNN ------------------------------------------------


@needs_x86
def test_status_shows_a_feature_plugin():
    rows = {row.name: row for row in ow.backends.status()}
    row = rows["x86quant"]
    assert row.kind == "feature" and row.loaded and row.available and row.reason is None
    assert "feature" in str(row) and "devices=" not in str(row)


@needs_x86
def test_conformance_config_states_one_step_for_quantized_outputs():
    import opweave_x86quant

    config = opweave_x86quant.opweave_conformance_config("cpu")
    assert config["tolerances"]["quint8"] == (0.0, 1.0)
    assert opweave_x86quant.opweave_conformance_config("vnpu") is None


_PROBE = """
import json, numpy as np, opweave as ow
from opweave.ops import quantized
flags = ow.backends.quantized
row = [r for r in ow.backends.status() if r.name == "x86quant"][0]
x = ow._make_per_tensor_quantized_tensor(ow.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3)), 0.5, 1)
w = ow._make_per_tensor_quantized_tensor(ow.tensor(np.ones((2, 3), np.int8)), 0.25, 0)
y = quantized.linear(x, quantized.linear_prepack(w), 1.0, 0)
try:
    flags.engine = "x86"
    refused = None
except RuntimeError as exc:
    refused = str(exc)
print(json.dumps({"engine": flags.engine, "supported": flags.supported_engines, "available": row.available,
                  "kind": row.kind, "reason": row.reason, "y": y.int_repr().numpy().tolist(), "refused": refused}))
"""


def test_without_onednn_the_reference_serves():
    env = dict(os.environ, OPWEAVE_ONEDNN_LIBRARY="/nonexistent/libdnnl.so.3")
    env.pop("OPWEAVE_QUANTIZED_ENGINE", None)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["engine"] == "reference" and got["supported"] == ["reference"]
    assert got["kind"] == "feature" and not got["available"] and "could not be loaded" in got["reason"]
    assert got["refused"] and "not available" in got["refused"]
    # row sums of (x - 1) are 0 and 9; times 0.5 * 0.25 / 1.0: 0 and 1.125, rounded: 0 and 1
    assert got["y"] == [[0, 0], [1, 1]]

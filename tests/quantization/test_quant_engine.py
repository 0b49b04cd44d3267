"""Engine selection (``opweave.backends.quantized``), registration by plugins, and the quantized:: namespace."""

from __future__ import annotations

import opweave as ow
import pytest
from opweave.quantization import _engine


@pytest.fixture
def restore_engines():
    """Restore the declared engines and the selection. Plugins are loaded first: a test that loaded them
    itself would otherwise restore a table without their engines, for every later test of the process."""
    _engine.ensure_plugins_loaded()
    saved_engines, saved_selected = dict(_engine._engines), _engine._selected
    yield
    _engine._engines.clear()
    _engine._engines.update(saved_engines)
    _engine._selected = saved_selected


def test_engine_flags(restore_engines):
    flags = ow.backends.quantized
    assert "reference" in flags.supported_engines and flags.supported_engines[0] == "reference"
    assert flags.engine in flags.supported_engines
    if "x86" in flags.supported_engines:
        _engine.reset_engine()
        assert flags.engine == "x86"  # the plugin's engine is the default when it is available
    flags.engine = "reference"
    assert flags.engine == "reference" and ow.quantization.get_engine() == "reference"
    with pytest.raises(RuntimeError, match="unknown"):
        flags.engine = "no-such-engine"
    assert "engine=" in repr(flags)


def test_register_engine(restore_engines):
    ow.quantization.register_engine("toyq", False, "needs a toy CPU")
    assert "toyq" not in ow.backends.quantized.supported_engines
    assert ow.backends.quantized.status()["toyq"] == (False, "needs a toy CPU")
    with pytest.raises(RuntimeError, match="needs a toy CPU"):
        ow.backends.quantized.engine = "toyq"
    ow.quantization.register_engine("toyq", True)
    _engine.reset_engine()
    assert ow.backends.quantized.engine == "toyq"
    with pytest.raises(ValueError, match="invalid engine name"):
        ow.quantization.register_engine("reference", True)


def test_quantized_namespace_is_separate():
    assert ow.ops.quantized.add.default.name == "quantized::add"
    assert ow.ops.add is not ow.ops.quantized.add
    assert "linear_prepack" in dir(ow.ops.quantized)
    op = ow.ops.lookup("quantized::linear")
    assert str(op.schema).startswith("quantized::linear(Tensor X, LinearPackedParamsBase W_prepack")


def test_quantized_calls_dispatch_at_the_quantized_layer():
    q = ow.quantize_per_tensor(ow.ones(2, 3), 0.1, 0, ow.quint8)
    found = ow.dispatch.explain(ow.ops.quantized.add.default, q, q, 0.2, 0)
    assert "Quantized" in str(found)
    x = ow.ones(2, 3)
    packed = ow.ops.quantized.linear_prepack(ow.quantize_per_tensor(ow.ones(4, 3), 0.1, 0, ow.qint8))
    # a float activation still reaches the Quantized layer (the decomposition re-enters it)
    assert ow.ops.quantized.linear_dynamic(x, packed).shape == (2, 4)


def test_reference_module_functions_take_schema_order_arguments():
    from opweave.quantization import reference

    ow.backends.quantized.engine = "reference"
    try:
        q = ow.quantize_per_tensor(ow.tensor([[0.5, -0.5]]), 0.1, 128, ow.quint8)
        w = ow.quantize_per_tensor(ow.tensor([[1.0, 1.0]]), 0.1, 0, ow.qint8)
        packed = reference.linear_prepack(w, None)
        direct = reference.linear(q, packed, 0.1, 128)
        via_op = ow.ops.quantized.linear(q, packed, 0.1, 128)
        assert direct.int_repr().tolist() == via_op.int_repr().tolist() == [[128]]
        assert reference.relu(q).int_repr().tolist() == [[133, 128]]
    finally:
        _engine.reset_engine()

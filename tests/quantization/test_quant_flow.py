"""The prepare/calibrate/convert flow and the quantize_mlp example (tiny sizes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import opweave as ow
import pytest
from opweave import quantization as Q

EXAMPLE = Path(__file__).parents[2] / "examples" / "quantize_mlp.py"


def load_example():
    spec = importlib.util.spec_from_file_location("quantize_mlp_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("engine", [None, "reference"])
def test_example_stays_within_its_tolerance(engine, capsys):
    example = load_example()
    saved = Q._engine._selected
    try:
        relative = example.main(hidden=16, samples=256, batch=64, engine=engine)
    finally:
        Q._engine._selected = saved
    assert relative <= example.TOLERANCE
    assert "max deviation" in capsys.readouterr().out


def test_conv_flow_matches_float_model():
    rng = np.random.default_rng(0)
    w = ow.tensor(rng.normal(0, 0.3, (4, 2, 3, 3)).astype(np.float32))
    b = ow.tensor(rng.normal(0, 0.1, 4).astype(np.float32))
    layers = [("conv2d", w, b, (1, 1), (1, 1), (1, 1), 1), ("relu",)]
    prepared = Q.prepare(layers, activation_observer=Q.MinMaxObserver)
    x = ow.tensor(rng.uniform(-1, 1, (2, 2, 6, 6)).astype(np.float32))
    Q.calibrate(prepared, [x])
    model = Q.convert(prepared)
    assert model.layers[0].op is ow.ops.quantized.conv2d_relu
    got = model(x).numpy()
    expected = np.maximum(ow.ops.prims.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1).numpy(), 0)
    step = model.layers[0].scale
    assert np.abs(got - expected).max() <= 4 * step + 0.05


def test_prepare_rejects_bad_layers():
    with pytest.raises(ValueError, match="relu must follow"):
        Q.prepare([("relu",)])
    with pytest.raises(ValueError, match="unknown layer"):
        Q.prepare([("dropout", 0.5)])

"""Factories take PyTorch's TensorOptions keywords, ``requires_grad=`` included, and their stubs say so."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import opweave as ow
import pytest

ROOT = Path(__file__).resolve().parent.parent
F64 = ow.float64
X = ow.ones(2, 3)

# name -> (call with requires_grad=True, the values NumPy gives, or None where they are random)
CALLS = {
    "zeros": (lambda: ow.zeros(2, 3, dtype=F64, requires_grad=True), np.zeros((2, 3))),
    "ones": (lambda: ow.ones((2,), requires_grad=True), np.ones(2)),
    "empty": (lambda: ow.empty(2, requires_grad=True), None),
    "empty_strided": (lambda: ow.empty_strided((2, 2), (2, 1), requires_grad=True), None),
    "empty_permuted": (lambda: ow.empty_permuted((2, 3), (1, 0), requires_grad=True), None),
    "full": (lambda: ow.full((2,), 1.5, requires_grad=True), np.full(2, 1.5)),
    "arange": (lambda: ow.arange(0.0, 3.0, requires_grad=True), np.arange(0.0, 3.0)),
    "linspace": (lambda: ow.linspace(0, 1, 5, requires_grad=True), np.linspace(0, 1, 5)),
    "logspace": (lambda: ow.logspace(0, 1, 5, requires_grad=True), np.logspace(0, 1, 5)),
    "eye": (lambda: ow.eye(3, 2, requires_grad=True), np.eye(3, 2)),
    "rand": (lambda: ow.rand(3, requires_grad=True), None),
    "randn": (lambda: ow.randn(3, requires_grad=True), None),
    "randint": (lambda: ow.randint(0, 5, (3,), dtype=F64, requires_grad=True), None),
    "randperm": (lambda: ow.randperm(3, dtype=F64, requires_grad=True), None),
    "scalar_tensor": (lambda: ow.scalar_tensor(2.0, requires_grad=True), np.float64(2.0)),
    "tensor": (lambda: ow.tensor([1.0, 2.0], requires_grad=True), np.array([1.0, 2.0])),
    "zeros_like": (lambda: ow.zeros_like(X, requires_grad=True), np.zeros((2, 3))),
    "ones_like": (lambda: ow.ones_like(X, dtype=F64, requires_grad=True), np.ones((2, 3))),
    "empty_like": (lambda: ow.empty_like(X, requires_grad=True), None),
    "full_like": (lambda: ow.full_like(X, 2.0, requires_grad=True), np.full((2, 3), 2.0)),
    "rand_like": (lambda: ow.rand_like(X, requires_grad=True), None),
    "randn_like": (lambda: ow.randn_like(X, requires_grad=True), None),
    "randint_like": (lambda: ow.randint_like(X, 5, requires_grad=True), None),
    "new_zeros": (lambda: X.new_zeros(2, requires_grad=True), np.zeros(2)),
    "new_ones": (lambda: X.new_ones(2, requires_grad=True), np.ones(2)),
    "new_empty": (lambda: X.new_empty(2, requires_grad=True), None),
    "new_full": (lambda: X.new_full((2,), 3.0, requires_grad=True), np.full(2, 3.0)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_factory_with_requires_grad_makes_a_leaf_that_takes_gradients(name):
    call, want = CALLS[name]
    t = call()
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert t.dtype.is_floating_point
    if want is not None:
        # float32 results: a few units in the last place of the float64 oracle
        np.testing.assert_allclose(t.detach().numpy(), want, rtol=1e-6, atol=0)
    (t * 2).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.full(tuple(t.shape), 2.0))


def test_factory_requires_grad_defaults_to_false_and_refuses_integer_dtypes():
    assert not ow.zeros(2).requires_grad and not ow.zeros_like(X).requires_grad
    # PyTorch: "Only Tensors of floating point and complex dtype can require gradients"
    with pytest.raises(RuntimeError, match="floating point and complex"):
        ow.zeros(2, dtype=ow.int64, requires_grad=True)
    assert ow.zeros(2, dtype=ow.complex64, requires_grad=True).requires_grad


def _stub_defs(path: Path, cls: str | None = None) -> dict[str, list[ast.FunctionDef]]:
    tree = ast.parse(path.read_text())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    defs: dict[str, list[ast.FunctionDef]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            defs.setdefault(node.name, []).append(node)
    return defs


def _keywords(node: ast.FunctionDef) -> set[str]:
    a = node.args
    return {x.arg for x in a.kwonlyargs} | {x.arg for x in a.args}


# PyTorch's TensorOptions keywords: ``memory_format`` on ``empty`` and the ``*_like`` factories only
OPTIONS = {"dtype", "layout", "device", "pin_memory", "requires_grad"}
MEMORY_FORMAT = {
    "empty",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
}


def test_factory_stubs_promise_the_tensor_options_pytorch_has():
    funcs = _stub_defs(ROOT / "core" / "__init__.pyi")
    methods = _stub_defs(ROOT / "core" / "_tensor.pyi", "Tensor")
    for name in CALLS:
        defs = methods[name] if name.startswith("new_") else funcs[name]
        for node in defs:
            kw = _keywords(node)
            if name == "tensor":
                assert {"dtype", "device", "requires_grad", "pin_memory"} <= kw, name
                continue
            assert OPTIONS <= kw, (name, sorted(OPTIONS - kw))
            if name in MEMORY_FORMAT and "out" not in kw:
                assert "memory_format" in kw, name


def test_every_stub_with_pin_memory_takes_requires_grad():
    for path, cls in ((ROOT / "core" / "__init__.pyi", None), (ROOT / "core" / "_tensor.pyi", "Tensor")):
        for name, defs in _stub_defs(path, cls).items():
            for node in defs:
                kw = _keywords(node)
                assert "pin_memory" not in kw or "requires_grad" in kw, (path.name, name)

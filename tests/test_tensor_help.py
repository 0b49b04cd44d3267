"""``help(opweave.Tensor)`` shows the op methods and operators with their docstrings and schemas."""

import pydoc

import opweave as ow


def test_help_lists_methods_with_docstrings_and_schemas():
    text = pydoc.plain(pydoc.render_doc(ow.Tensor))
    assert " |  add(self" in text
    start = text.index(" |  add(self")
    block = text[start : text.index(" |  add_(", start)]
    assert "type promotion" in block  # the op's own docstring
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in block
    assert "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor" in block


def test_every_public_method_and_operator_is_documented_and_named():
    undocumented = [
        name
        for name, value in vars(ow.Tensor).items()
        if callable(value) and not name.startswith("_") and not (value.__doc__ or "").strip()
    ]
    assert not undocumented
    for dunder in ("__iadd__", "__radd__", "__neg__", "__eq__"):
        fn = vars(ow.Tensor)[dunder]
        assert fn.__doc__, dunder
        assert fn.__name__ == dunder
    assert ow.Tensor.sum.__qualname__ == "Tensor.sum"

"""``opweave.backends.cuda``: PyTorch's ``torch.backends.cuda`` flags, in the core (no GPU, no plugin needed).

The expectations are PyTorch's documented behaviour (``torch.backends`` docs and ``torch/backends/cuda/__init__.py``):
``matmul.allow_tf32`` is the float32 matmul precision seen as a bool (True sets "high", False "highest"; reading gives
``precision != "highest"``); ``allow_fp16_reduced_precision_reduction`` and ``allow_bf16_reduced_precision_reduction``
default to True and take a bool or ``(allow_reduced_precision[, allow_splitk])``; ``allow_fp16_accumulation`` defaults
to False; ``is_built()`` says whether CUDA support is installed, not whether a GPU is present.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import threading

import opweave
import pytest


@pytest.fixture(autouse=True)
def _restore():
    flags = opweave.backends.cuda.matmul
    opweave.set_float32_matmul_precision("highest")
    yield
    opweave.set_float32_matmul_precision("highest")
    flags.allow_fp16_reduced_precision_reduction = (True, True)
    flags.allow_bf16_reduced_precision_reduction = (True, True)
    flags.allow_fp16_accumulation = False


def test_defaults_are_pytorchs():
    flags = opweave.backends.cuda.matmul
    assert flags.allow_tf32 is False  # False since PyTorch 1.12
    assert flags.allow_fp16_reduced_precision_reduction is True
    assert flags.allow_bf16_reduced_precision_reduction is True
    assert flags.allow_fp16_reduced_precision_reduction_split_k is True
    assert flags.allow_bf16_reduced_precision_reduction_split_k is True
    assert flags.allow_fp16_accumulation is False


def test_every_import_form_gives_one_module_sharing_the_flags():
    import opweave.backends.cuda as imported
    from opweave.backends import cuda as from_import

    assert imported is from_import is opweave.backends.cuda is importlib.import_module("opweave.backends.cuda")
    assert imported.matmul is opweave.backends.cuda.matmul
    from opweave import _modes

    assert _modes.device_flags("cuda").matmul is imported.matmul, "the generic per-device view is the same object"
    assert callable(imported.is_built)


@pytest.mark.parametrize(("precision", "allow_tf32"), [("highest", False), ("high", True), ("medium", True)])
def test_allow_tf32_reads_the_precision(precision, allow_tf32):
    opweave.set_float32_matmul_precision(precision)
    assert opweave.backends.cuda.matmul.allow_tf32 is allow_tf32


@pytest.mark.parametrize("start", ["highest", "high", "medium"])
def test_setting_allow_tf32_sets_high_or_highest(start):
    opweave.set_float32_matmul_precision(start)
    opweave.backends.cuda.matmul.allow_tf32 = True
    assert opweave.get_float32_matmul_precision() == "high"
    opweave.backends.cuda.matmul.allow_tf32 = False
    assert opweave.get_float32_matmul_precision() == "highest"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize(
    ("value", "reduced", "split_k"),
    [
        (False, False, True),
        (True, True, True),
        ((False,), False, True),
        ([False], False, True),
        ((False, False), False, False),
        ((True, False), True, False),
        ([False, True], False, True),
    ],
)
def test_reduced_precision_reduction_takes_a_bool_or_a_pair(dtype, value, reduced, split_k):
    flags = opweave.backends.cuda.matmul
    name = f"allow_{dtype}_reduced_precision_reduction"
    other = f"allow_{'bf16' if dtype == 'fp16' else 'fp16'}_reduced_precision_reduction"
    setattr(flags, name, value)
    assert getattr(flags, name) is reduced
    assert getattr(flags, f"{name}_split_k") is split_k
    assert getattr(flags, other) is True, "the two dtypes are separate settings"
    assert opweave.get_float32_matmul_precision() == "highest", "no effect on the float32 precision"


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (1, "expects a bool or a tuple/list of bools, but got int"),
        (None, "expects a bool or a tuple/list of bools, but got NoneType"),
        ("yes", "expects a bool or a tuple/list of bools, but got str"),
        ((), "expects at least one boolean argument"),
        ((True, False, True), "expects at most two boolean arguments"),
        ((1,), "expects a bool for allow_reduced_precision, but got int"),
        ((True, 0), "expects a bool for allow_splitk, but got int"),
    ],
)
def test_reduced_precision_reduction_rejects_other_values_with_typeerror(value, match):
    flags = opweave.backends.cuda.matmul
    flags.allow_bf16_reduced_precision_reduction = (False, False)
    with pytest.raises(TypeError, match=rf"backends\.cuda\.matmul\.allow_bf16_reduced_precision_reduction {match}"):
        flags.allow_bf16_reduced_precision_reduction = value
    assert flags.allow_bf16_reduced_precision_reduction is False, "a rejected value changes nothing"
    assert flags.allow_bf16_reduced_precision_reduction_split_k is False


def test_fp16_accumulation_is_a_bool():
    flags = opweave.backends.cuda.matmul
    flags.allow_fp16_accumulation = True
    assert flags.allow_fp16_accumulation is True
    with pytest.raises(TypeError, match=r"allow_fp16_accumulation.*must be bool"):
        flags.allow_fp16_accumulation = 1
    assert flags.allow_fp16_accumulation is True


def test_unknown_settings_and_read_only_split_k_raise_attributeerror():
    flags = opweave.backends.cuda.matmul
    with pytest.raises(AttributeError, match="allow_tf23"):
        flags.allow_tf23 = True
    with pytest.raises(AttributeError, match="split_k"):
        flags.allow_fp16_reduced_precision_reduction_split_k = False
    with pytest.raises(AttributeError):
        flags.no_such_flag  # noqa: B018


def test_settings_are_process_wide():
    flags = opweave.backends.cuda.matmul
    flags.allow_bf16_reduced_precision_reduction = False
    seen = []
    worker = threading.Thread(
        target=lambda: seen.append(
            (
                opweave.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
                opweave.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            )
        )
    )
    worker.start()
    worker.join()
    assert seen == [(False, True)]


def test_repr_shows_every_setting():
    text = repr(opweave.backends.cuda.matmul)
    for part in (
        "allow_tf32=False",
        "allow_fp16_reduced_precision_reduction=True",
        "allow_bf16_reduced_precision_reduction=True",
        "allow_fp16_accumulation=False",
    ):
        assert part in text


def _cuda_plugin_installed() -> bool:
    for entry_point in importlib.metadata.entry_points(group="opweave.backends"):
        if entry_point.name == "cuda":
            return importlib.util.find_spec(entry_point.value.partition(":")[0]) is not None
    return False


def test_is_built_says_whether_the_cuda_plugin_is_installed_without_loading_it():
    was_imported = "opweave_cuda" in sys.modules
    assert opweave.backends.cuda.is_built() is _cuda_plugin_installed()
    if not was_imported:
        assert "opweave_cuda" not in sys.modules, "is_built() imports no plugin"


def test_is_built_is_true_for_a_registered_cuda_backend(monkeypatch):
    from opweave import _backends
    from opweave.backends import Backend

    class _FakeCuda(Backend):
        name = "cuda"

    monkeypatch.setitem(_backends._backends, "cuda", _FakeCuda())
    assert opweave.backends.cuda.is_built() is True


def test_the_flags_need_no_plugin():
    """With plugin autoloading off, the module imports and the flags work (and nothing loads the CUDA plugin)."""
    code = (
        "import sys, opweave.backends.cuda as c; c.matmul.allow_bf16_reduced_precision_reduction = False; "
        "import opweave; opweave.backends.cuda.matmul.allow_tf32 = True; "
        "print(opweave.get_float32_matmul_precision(), c.matmul.allow_bf16_reduced_precision_reduction, "
        "'opweave_cuda' in sys.modules)"
    )
    env = {"OPWEAVE_AUTOLOAD": "0", "PATH": ""}
    if "PYTHONPATH" in os.environ:  # opweave may be found through it (scripts/cuda_check.sh without pip)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["high", "False", "False"]

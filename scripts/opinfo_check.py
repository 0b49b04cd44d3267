#!/usr/bin/env python
"""Run PyTorch's OpInfo database against opweave and print how much of it agrees.

For every OpInfo of ``torch.testing._internal.common_methods_invocations.op_db`` (which
aggregates the linalg, fft, special, masked and signal-window databases) and every dtype of
float32/float64/int64/bool/complex64 that PyTorch supports on the CPU, the first ``--samples``
sample inputs are converted to opweave (tensors, dtypes, devices, recursively through args and
kwargs), the opweave function of the same name is called (``torch.X`` -> ``opweave.X``,
``torch.nn.functional.X`` -> ``opweave.nn.functional.X``, the linalg/fft/special/masked/
signal.windows namespaces, Tensor methods), and the result is compared with PyTorch's: dtype,
shape and values within OpInfo's tolerances (the largest ``toleranceOverride`` the OpInfo declares
for the dtype, else ``torch.testing.assert_close``'s defaults). Ops that draw random numbers are
compared by dtype and shape only. Each error input (``op.error_inputs("cpu")``) on which PyTorch
raises is run too: opweave must raise, with the same exception type (or a subclass of it).

Prints per-area figures (OpInfos covered, samples agreeing, error inputs raising / with the same
type) and the ops with the most disagreeing samples. Needs PyTorch and ``expecttest``; a developer
tool, not part of CI.

    python scripts/opinfo_check.py --samples 8 --json opinfo.json
    python scripts/opinfo_check.py --ops 'nn.functional.*' 'linalg.svd' -v
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import fnmatch
import functools
import itertools
import json
import math
import signal
import sys
import time
import types
import warnings

try:
    import torch
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.common_methods_invocations import op_db
except ImportError as exc:  # pragma: no cover - depends on the developer's machine
    sys.exit(f"opinfo_check needs PyTorch and expecttest (pip install torch expecttest): {exc}")

import numpy as np
import opweave as ow

TEST_DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64)
AREAS = (
    "torch",
    "Tensor",
    "nn.functional",
    "linalg",
    "fft",
    "special",
    "masked",
    "signal.windows",
    "sparse",
    "cuda-only",
)
CUDA_ONLY = {"torch.ops.aten._flash_attention_forward", "torch.ops.aten._efficient_attention_forward"}
# Areas outside the comparison: sparse layouts (out of scope) and CUDA-only APIs (jiterator).
EXCLUDED = ("sparse", "cuda-only")
# Ops whose result is uninitialised memory: only dtype and shape are compared.
UNINITIALISED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}
CALL_TIMEOUT_S = 20


class Unsupported(Exception):
    """A sample holds something with no opweave counterpart (a sparse tensor, a generator)."""


class Missing(Exception):
    """opweave has no function of the op's name."""


class Timeout(Exception):
    """One call ran longer than CALL_TIMEOUT_S."""


@contextlib.contextmanager
def time_limit(seconds: int):
    def handler(signum, frame):
        raise Timeout(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# -- torch -> opweave -----------------------------------------------------------------------------


def _dtype_map():
    out = {}
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
    ):
        if hasattr(ow, name):
            out[getattr(torch, name)] = getattr(ow, name)
    return out


DTYPES = _dtype_map()
DTYPES_BACK = {v: k for k, v in DTYPES.items()}


def to_ow(x, storages=None):
    """``x`` with every torch object replaced by its opweave counterpart.

    With a ``storages`` dict (shared over one sample's input, args and kwargs), tensors keep their
    layout and aliasing: tensors on one torch storage become views (same sizes, strides and offset)
    of one opweave storage, so ``out=`` overlap checks see what PyTorch saw.
    """
    try:
        return _to_ow(x, storages)
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(first_line(exc)) from None


def _aliased_to_ow(x, storages):
    """``x`` as a view of the opweave copy of its torch storage (made once per storage)."""
    storage = x.untyped_storage()
    if storage.nbytes() % x.element_size():
        return None
    key = (storage.data_ptr(), storage.nbytes(), x.dtype)
    if key not in storages:
        whole = torch.empty(0, dtype=x.dtype).set_(storage).detach()
        storages[key] = _to_ow(whole, None)
    return storages[key].as_strided(tuple(x.shape), tuple(x.stride()), x.storage_offset())


def _tensor_to_ow(x, storages):
    """A torch tensor as an opweave one: a copy, or with ``storages`` a view of its storage's copy."""
    if x.layout != torch.strided:
        raise Unsupported(f"layout {x.layout}")
    if x.dtype not in DTYPES:
        raise Unsupported(f"dtype {x.dtype}")
    x = x.detach().resolve_conj().resolve_neg()
    if x.device.type == "meta":
        return ow.empty(tuple(x.shape), dtype=DTYPES[x.dtype], device="meta")
    if x.device.type != "cpu":
        raise Unsupported(f"device {x.device}")
    if storages is not None and (view := _aliased_to_ow(x, storages)) is not None:
        return view
    if x.dtype in (torch.bfloat16, torch.float16):
        return ow.from_numpy(x.float().numpy().copy()).to(DTYPES[x.dtype])
    return ow.from_numpy(x.numpy().copy(order="K"))


def _to_ow(x, storages=None):
    if isinstance(x, torch.Tensor):
        if storages is None:
            return _tensor_to_ow(x, None)
        tensors = storages.setdefault("tensors", {})  # one torch tensor, one opweave tensor
        if id(x) not in tensors:
            tensors[id(x)] = (x, _tensor_to_ow(x, storages.setdefault("storages", {})))
        return tensors[id(x)][1]
    if isinstance(x, torch.dtype):
        if x not in DTYPES:
            raise Unsupported(f"dtype {x}")
        return DTYPES[x]
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.memory_format):
        name = str(x).split(".")[-1]
        if not hasattr(ow, name):
            raise Unsupported(f"memory format {x}")
        return getattr(ow, name)
    if isinstance(x, torch.layout):  # opweave names layouts; it has only "strided", and rejects the others
        name = str(x).split(".")[-1]
        return getattr(ow, name) if hasattr(ow, name) else ow.layout(name)
    if isinstance(x, torch.nn.PairwiseDistance):
        return functools.partial(ow.nn.functional.pairwise_distance, p=x.norm, eps=x.eps, keepdim=x.keepdim)
    if isinstance(x, torch.nn.CosineSimilarity):
        return functools.partial(ow.nn.functional.cosine_similarity, dim=x.dim, eps=x.eps)
    if isinstance(x, types.FunctionType) and (x.__module__ or "").startswith("torch.testing"):
        return rebind(x)  # a helper the sample passes (a distance function): its ``torch`` becomes opweave
    if callable(x) and (getattr(x, "__module__", None) or "").startswith("torch") and hasattr(x, "__name__"):
        namespace = ow.nn.functional if "functional" in x.__module__ else ow
        if not hasattr(namespace, x.__name__):
            raise Unsupported(f"callable {x.__module__}.{x.__name__}")
        return getattr(namespace, x.__name__)
    if isinstance(x, torch.Generator):
        raise Unsupported("torch.Generator")
    if isinstance(x, list):
        return [_to_ow(v, storages) for v in x]
    if isinstance(x, tuple):
        return tuple(_to_ow(v, storages) for v in x)
    if isinstance(x, dict):
        return {k: _to_ow(v, storages) for k, v in x.items()}
    return x


def to_torch(x):
    """An opweave result as torch objects (namedtuples keep their field names in ``.fields``)."""
    if isinstance(x, ow.Tensor):
        if x.dtype not in DTYPES_BACK:
            raise TypeError(f"result dtype {x.dtype} has no torch counterpart")
        array = np.asarray(x.cpu().numpy(force=True))
        target = DTYPES_BACK[x.dtype]
        if target in (torch.bfloat16, torch.float16):
            return torch.from_numpy(array.astype(np.float32)).to(target)
        return torch.from_numpy(array.copy())
    if isinstance(x, ow.dtype):
        return DTYPES_BACK.get(x, x)
    if isinstance(x, ow.Size):
        return torch.Size(x)
    if isinstance(x, (list, tuple)):
        items = [to_torch(v) for v in x]
        if hasattr(x, "_fields"):
            return Named(items, tuple(x._fields))
        return type(x)(items) if isinstance(x, list) else tuple(items)
    return x


class Named(tuple):
    """A converted named tuple: the values, and the field names it had."""

    def __new__(cls, items, fields):
        self = super().__new__(cls, items)
        self.fields = fields
        return self


class TorchProxy:
    """Stands for ``torch`` inside OpInfo lambdas: ``torch.X`` -> ``opweave.X``."""

    def __init__(self, target, path="torch"):
        self._target, self._path = target, path

    def __getattr__(self, name):
        if self._target is ow and name == "Tensor":
            return ow.Tensor
        if self._target is ow and isinstance(getattr(torch, name, None), torch.dtype):
            return to_ow(getattr(torch, name))
        try:
            value = getattr(self._target, name)
        except AttributeError:
            raise Missing(f"{self._path}.{name}") from None
        if isinstance(value, types.ModuleType):
            return TorchProxy(value, f"{self._path}.{name}")
        return value


def _wrapper_set_seed(op, *args, **kwargs):
    ow.manual_seed(42)
    return op(*args, **kwargs)


def rebind(fn):
    """An OpInfo lambda whose ``torch`` is opweave."""
    namespace = dict(fn.__globals__)
    namespace["torch"] = TorchProxy(ow)
    namespace["wrapper_set_seed"] = _wrapper_set_seed
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


class MethodCaller:
    """Calls ``input.<name>(*args, **kwargs)``, or ``Tensor.<name>(input, ...)`` when ``input`` is not a tensor."""

    def __init__(self, name):
        self.name = name

    def __call__(self, input, *args, **kwargs):
        if not isinstance(input, ow.Tensor):  # OpInfo calls torch.Tensor.<name> unbound: so does opweave
            if not hasattr(ow.Tensor, self.name):
                raise Missing(f"Tensor.{self.name}")
            return getattr(ow.Tensor, self.name)(input, *args, **kwargs)
        try:
            method = getattr(input, self.name)
        except AttributeError:
            raise Missing(f"Tensor.{self.name}") from None
        return method(*args, **kwargs)


def resolve(op):
    """The opweave callable that stands for ``op`` (raises Missing when there is none)."""
    fn = op.op
    if isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith("torch.testing"):
        return rebind(fn)
    if op.name.startswith("torch.ops.aten."):  # an ATen overload: opweave.ops.<name>.<overload>
        parts = op.name.split(".")
        name, overload = parts[3], (parts[4] if len(parts) > 4 else "default")
        packet = getattr(ow.ops, name, None)
        if packet is None:
            raise Missing(f"opweave.ops.{name}")
        return getattr(packet, overload)
    obj = ow
    try:
        for part in op.name.split("."):
            obj = getattr(obj, part)
        if callable(obj) and not isinstance(obj, (ow.dtype, type)):
            return obj
    except AttributeError:
        pass
    name = op.name.split(".")[-1]
    torch_fn = getattr(torch, name, None)
    if name.startswith("__") or (
        (not callable(torch_fn) or isinstance(torch_fn, torch.dtype)) and hasattr(torch.Tensor, name)
    ):
        return MethodCaller(name)
    raise Missing(f"opweave.{op.name}")


def area_of(op) -> str:
    if op.name.startswith("jiterator_") or op.name in CUDA_ONLY:  # jiterator, flash/efficient attention kernels
        return "cuda-only"
    if op.name == "to_sparse":
        return "sparse"
    for prefix in ("nn.functional", "linalg", "fft", "special", "masked", "signal.windows", "sparse"):
        if op.name.startswith(prefix + "."):
            return prefix
    fn = getattr(torch, op.name.split(".")[0], None)
    if op.name.startswith("__") or not callable(fn) or isinstance(fn, torch.dtype):
        return "Tensor"
    return "torch"


# -- comparison -------------------------------------------------------------------------------------


def tolerances(op, dtype):
    """The largest (rtol, atol) the OpInfo overrides for ``dtype``, or None for the defaults."""
    best = None
    for decorator in list(op.decorators or ()) + list(op.skips or ()):
        for d in getattr(decorator, "decorators", None) or [decorator]:
            if isinstance(d, toleranceOverride) and dtype in d.d:
                t = d.d[dtype]
                best = (max(best[0], t.rtol), max(best[1], t.atol)) if best else (t.rtol, t.atol)
    return best


class Disagree(Exception):
    """A result differs from PyTorch's; the message says how (its first word is the kind)."""


def compare(expected, actual, tol, shape_only: bool, where: str = "") -> None:
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Disagree(f"type{where}: expected a Tensor, got {type(actual).__name__}")
        if expected.dtype != actual.dtype:
            raise Disagree(f"dtype{where}: expected {expected.dtype}, got {actual.dtype}")
        if expected.shape != actual.shape:
            raise Disagree(f"shape{where}: expected {list(expected.shape)}, got {list(actual.shape)}")
        if shape_only:
            return
        kwargs = {"rtol": tol[0], "atol": tol[1]} if tol else {}
        try:
            torch.testing.assert_close(
                actual, expected, equal_nan=True, check_device=False, check_stride=False, **kwargs
            )
        except AssertionError as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            raise Disagree(f"values{where}: " + "; ".join(lines[:4])) from None
        return
    if isinstance(expected, (tuple, list)) and not isinstance(expected, torch.Size):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise Disagree(f"type{where}: expected a sequence of {len(expected)}, got {type(actual).__name__}")
        fields = getattr(expected, "_fields", None)
        if fields and getattr(actual, "fields", None) != tuple(fields):
            raise Disagree(f"fields{where}: expected a named tuple with {fields}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare(e, a, tol, shape_only, f"{where}[{i}]")
        return
    if isinstance(expected, (bool, int, float, complex)) and not shape_only:
        if isinstance(actual, torch.Tensor) or not isinstance(actual, (bool, int, float, complex)):
            raise Disagree(f"type{where}: expected {type(expected).__name__}, got {type(actual).__name__}")
        e, a = complex(expected), complex(actual)
        if not (e == a or (math.isnan(abs(e)) and math.isnan(abs(a))) or abs(e - a) <= 1e-5 + 1.3e-6 * abs(e)):
            raise Disagree(f"values{where}: expected {expected!r}, got {actual!r}")
        return
    if not shape_only and expected != actual:
        raise Disagree(f"values{where}: expected {expected!r}, got {actual!r}")


def is_random(op, sample) -> bool:
    """Whether ``op`` draws random numbers: OpInfo seeds it, or two runs with different seeds differ."""
    code = getattr(op.op, "__code__", None)
    if code is not None and "wrapper_set_seed" in code.co_names:
        return True
    results = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        results.append(op(sample.input, *sample.args, **sample.kwargs))
    try:
        compare(results[0], results[1], (0, 0), False)
    except Disagree:
        return True
    return False


# -- running -----------------------------------------------------------------------------------------


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160] if text else ''}"


def is_missing(exc: BaseException) -> bool:
    """An AttributeError saying that opweave lacks a function or Tensor method."""
    text = str(exc)
    return isinstance(exc, AttributeError) and ("'Tensor' object has no attribute" in text or "module 'opweave" in text)


def run_sample(op, fn, sample, dtype, random: bool):
    """(kind, message) for one sample: kind is "agree", "missing", "unsupported" or a disagreement."""
    try:
        torch.manual_seed(0)
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        return "torch-error", ""
    try:
        inp, args, kwargs = to_ow(sample.input), to_ow(sample.args), to_ow(sample.kwargs)
    except Unsupported as exc:
        return "unsupported", str(exc)
    try:
        with time_limit(CALL_TIMEOUT_S):
            ow.manual_seed(0)
            actual = to_torch(fn(inp, *args, **kwargs))
    except Missing as exc:
        return "missing", str(exc)
    except Timeout as exc:
        return "timeout", str(exc)
    except Exception as exc:
        if is_missing(exc):
            return "missing", first_line(exc)
        return "error", first_line(exc)
    shape_only = random or op.name in UNINITIALISED
    try:
        compare(expected, actual, tolerances(op, dtype), shape_only)
    except Disagree as exc:
        kind = str(exc).split(":")[0].split("[")[0]
        return kind, str(exc)[:300]
    return "agree", ""


def convert_error_input(error_input):
    """``(converted (input, args, kwargs) or None, Unsupported or None)``, keeping layout and aliasing.

    Run on every error input of an op before torch runs any: error inputs share tensors, and a
    failing torch call may already have resized an ``out=`` tensor.
    """
    sample = error_input.sample_input
    storages: dict = {}
    try:
        return (to_ow(sample.input, storages), to_ow(sample.args, storages), to_ow(sample.kwargs, storages)), None
    except Unsupported as exc:
        return None, exc


def run_error_input(op, fn, error_input, converted, unsupported):
    """(torch raises, opweave raises, same type, message) for one error input (converted beforehand)."""
    sample = error_input.sample_input
    try:
        op(sample.input, *sample.args, **sample.kwargs)
        return False, False, False, ""
    except Exception as exc:
        # What PyTorch raised (OpInfo's declared type when that is more specific than the raised one).
        expected_type = type(exc)
        declared = error_input.error_type
        if isinstance(exc, declared) and declared not in (Exception, BaseException):
            expected_type = declared
    if converted is None:
        return True, False, False, f"unsupported: {unsupported}"
    inp, args, kwargs = converted
    try:
        with time_limit(CALL_TIMEOUT_S):
            fn(inp, *args, **kwargs)
    except Missing as exc:
        return True, False, False, f"missing: {exc}"
    except AttributeError as exc:
        if is_missing(exc):
            return True, False, False, f"missing: {exc}"
        return True, True, isinstance(exc, expected_type), first_line(exc)
    except Timeout:
        return True, False, False, "timeout"
    except Exception as exc:
        same = isinstance(exc, expected_type)
        return True, True, same, "" if same else f"expected {expected_type.__name__}, got {first_line(exc)}"
    return True, False, False, f"no error (torch: {expected_type.__name__})"


def check_op(op, n_samples: int, verbose: bool):
    record = {
        "name": op.name,
        "variant": op.variant_test_name,
        "area": area_of(op),
        "samples": 0,
        "agree": 0,
        "kinds": collections.Counter(),
        "examples": [],
        "errors": 0,
        "raised": 0,
        "same_type": 0,
        "error_examples": [],
    }
    try:
        fn = resolve(op)
    except Missing as exc:
        fn, record["missing"] = None, str(exc)
    supported = op.supported_dtypes("cpu")
    for dtype in TEST_DTYPES:
        if dtype not in supported:
            continue
        try:
            samples = list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=False), n_samples))
        except Exception as exc:  # the database itself fails for this dtype
            record["examples"].append(f"{dtype}: sample_inputs failed: {first_line(exc)}")
            continue
        random = False
        if samples and fn is not None:
            with contextlib.suppress(Exception):
                random = is_random(op, samples[0])
        for sample in samples:
            if fn is None:
                kind, message = "missing", record["missing"]
            else:
                kind, message = run_sample(op, fn, sample, dtype, random)
            if kind == "torch-error":
                continue
            record["samples"] += 1
            record["kinds"][kind] += 1
            if kind == "agree":
                record["agree"] += 1
            elif len(record["examples"]) < 4:
                record["examples"].append(f"{str(dtype).split('.')[-1]}: {message}")
    if op.error_inputs_func is not None:
        try:
            error_inputs = list(op.error_inputs("cpu"))
        except Exception:
            error_inputs = []
        conversions = [convert_error_input(e) for e in error_inputs] if fn is not None else []
        for i, error_input in enumerate(error_inputs):
            if fn is None:
                torch_raises = True
                raised = same = False
                message = "missing"
                try:
                    s = error_input.sample_input
                    op(s.input, *s.args, **s.kwargs)
                    torch_raises = False
                except Exception:
                    pass
            else:
                torch_raises, raised, same, message = run_error_input(op, fn, error_input, *conversions[i])
            if not torch_raises:
                continue
            record["errors"] += 1
            record["raised"] += raised
            record["same_type"] += same
            if not same and len(record["error_examples"]) < 4:
                record["error_examples"].append(message[:300])
    record["covered"] = record["agree"] > 0
    if verbose:
        tag = f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}"
        print(
            f"  {tag:<50} {record['agree']:>3}/{record['samples']:<3} errors {record['same_type']}/{record['errors']}",
            flush=True,
        )
        for example in record["examples"] + record["error_examples"]:
            print(f"      {example}")
    return record


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "    -"


def summarise(records) -> dict:
    areas = {}
    for area in AREAS + ("all", "all but sparse/CUDA"):
        if area == "all but sparse/CUDA":
            rs = [r for r in records if r["area"] not in EXCLUDED]
        else:
            rs = [r for r in records if area in ("all", r["area"])]
        if not rs:
            continue
        tested = [r for r in rs if r["samples"]]
        covered = [r for r in tested if r["covered"]]
        areas[area] = {
            "opinfos": len(rs),
            "tested": len(tested),
            "covered": len(covered),
            "samples": sum(r["samples"] for r in rs),
            "agree": sum(r["agree"] for r in rs),
            "samples_covered": sum(r["samples"] for r in covered),
            "agree_covered": sum(r["agree"] for r in covered),
            "errors": sum(r["errors"] for r in rs),
            "raised": sum(r["raised"] for r in rs),
            "same_type": sum(r["same_type"] for r in rs),
        }
    return areas


def print_report(records, areas, worst: int) -> None:
    print()
    print(
        f"{'area':<16}{'OpInfos':>8}{'covered':>9}{'':>7}{'samples':>9}{'agree':>8}{'':>7}"
        f"{'(covered)':>10}{'err in':>8}{'raised':>8}{'same type':>10}"
    )
    for area, a in areas.items():
        print(
            f"{area:<16}{a['opinfos']:>8}{a['covered']:>9}{pct(a['covered'], a['tested']):>7}"
            f"{a['samples']:>9}{a['agree']:>8}{pct(a['agree'], a['samples']):>7}"
            f"{pct(a['agree_covered'], a['samples_covered']):>10}"
            f"{a['errors']:>8}{pct(a['raised'], a['errors']):>8}{pct(a['same_type'], a['errors']):>10}"
        )
    kinds = collections.Counter()
    for r in records:
        kinds.update(r["kinds"])
    print("\nsample outcomes:", ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    print(f"\nworst {worst} OpInfos (disagreeing samples + error inputs without the same type):")
    scored = sorted(
        records,
        key=lambda r: -((r["samples"] - r["agree"]) + (r["errors"] - r["same_type"])),
    )
    for r in scored[:worst]:
        bad = (r["samples"] - r["agree"]) + (r["errors"] - r["same_type"])
        if not bad:
            break
        tag = f"{r['name']}{'.' + r['variant'] if r['variant'] else ''}"
        detail = (r["examples"] or r["error_examples"] or [""])[0]
        print(f"  {tag:<42}{r['agree']:>4}/{r['samples']:<4}err {r['same_type']}/{r['errors']:<4} {detail[:110]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", nargs="*", help="fnmatch patterns on OpInfo names (name or name.variant)")
    parser.add_argument("--samples", type=int, default=8, help="sample inputs per (op, dtype); default 8")
    parser.add_argument("--json", help="write per-op records and per-area figures to this file")
    parser.add_argument("--worst", type=int, default=40, help="how many of the worst ops to list")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every op with its failures")
    options = parser.parse_args(argv)

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    ops = list(op_db)
    if options.ops:
        ops = [
            op
            for op in ops
            if any(
                fnmatch.fnmatchcase(op.name, p) or fnmatch.fnmatchcase(f"{op.name}.{op.variant_test_name}", p)
                for p in options.ops
            )
        ]
    start = time.time()
    records = []
    for i, op in enumerate(ops):
        if not options.verbose and i % 50 == 0:
            print(f"[{i}/{len(ops)}] {time.time() - start:.0f} s", file=sys.stderr, flush=True)
        try:
            records.append(check_op(op, options.samples, options.verbose))
        except Exception as exc:  # the database or the comparison itself failed: report, go on
            print(f"  {op.name}: check failed: {first_line(exc)}", file=sys.stderr)
    areas = summarise(records)
    print_report(records, areas, options.worst)
    print(f"\n{len(ops)} OpInfos in {time.time() - start:.0f} s, {options.samples} samples per (op, dtype)")
    if options.json:
        for r in records:
            r["kinds"] = dict(r["kinds"])
        with open(options.json, "w") as f:
            json.dump({"areas": areas, "ops": records, "samples": options.samples}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Tests for opweave._schema, the ATen operator schema parser."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave._schema import (
    KNOWN_TYPES,
    NO_DEFAULT,
    AliasInfo,
    Argument,
    OpSchema,
    Return,
    SchemaType,
    _Parser,
    parse_schema,
)

# The examples of the module's specification.
SPEC = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "prims::sum(Tensor inp, int[]? dims, *, ScalarType? output_dtype=None) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
    "max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
    "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    '_foo(Tensor[] tensors, int[1]? dim=None, float eps=1e-05, str reduction="mean", '
    "str pad_mode='reflect', float lo=-inf, bool flag=True, ScalarType? dtype=None, "
    "MemoryFormat memory_format=contiguous_format, Layout? layout=None, Device? device=None, "
    "Generator? generator=None) -> ()",
    "item(Tensor self) -> Scalar",
    "_local_scalar_dense(Tensor self) -> float",
    "size.int(Tensor self, int dim) -> int",
    "sym_strides(Tensor self) -> int[]",
    "is_nonzero(Tensor self) -> bool",
    "broadcast_tensors(Tensor[] tensors) -> Tensor[]",
]

# Real ATen schemas, each with its expected properties:
# (schema, qualified_name, is_inplace, is_out, is_view, mutated_arguments, returns_tuple,
#  names of the kwarg-only arguments)
REAL = [
    ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "add.Tensor", False, False, False, (), False, ("alpha",)),
    ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "aten::add.Tensor", False, False, False, (), False, ("alpha",)),
    ("prims::sum(Tensor inp, int[]? dims, *, ScalarType? output_dtype=None) -> Tensor",
     "prims::sum", False, False, False, (), False, ("output_dtype",)),
    ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
     "add_.Tensor", True, False, False, ("self",), False, ("alpha",)),
    ("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
     "add.out", False, True, False, ("out",), False, ("alpha", "out")),
    ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     "max.dim", False, False, False, (), True, ()),
    ("max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
     "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
     "max.dim_max", False, True, False, ("max", "max_values"), True, ("max", "max_values")),
    ("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
     "split.Tensor", False, False, True, (), False, ()),
    ("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
     "index.Tensor", False, False, False, (), False, ()),
    ("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
     "ScalarType? dtype=None) -> Tensor",
     "sum.dim_IntList", False, False, False, (), False, ("dtype",)),
    ("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "mean.dim", False, False, False, (), False, ("dtype",)),
    ("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
     "bool keepdim=False) -> Tensor",
     "var.correction", False, False, False, (), False, ("correction", "keepdim")),
    ("var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
     "bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
     "var_mean.correction_out", False, True, False, ("out0", "out1"), True,
     ("correction", "keepdim", "out0", "out1")),
    ("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
     "(Tensor values, Tensor indices)",
     "topk", False, False, False, (), True, ()),
    ("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
     "(Tensor values, Tensor indices)",
     "sort.stable", False, False, False, (), True, ("stable", "dim", "descending")),
    ("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
     "scatter.src", False, False, False, (), False, ()),
    ("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
     "scatter_.src", True, False, False, ("self",), False, ()),
    ("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
     "bool include_self=True) -> Tensor",
     "scatter_reduce.two", False, False, False, (), False, ("include_self",)),
    ("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
     "index_put", False, False, False, (), False, ()),
    ("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> "
     "Tensor(a!)",
     "index_put_", True, False, False, ("self",), False, ()),
    ("index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "index_put.out", False, True, False, ("out",), False, ("out",)),
    ("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
     "where.self", False, False, False, (), False, ()),
    ("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
     "clamp.Tensor", False, False, False, (), False, ()),
    ("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
     "softmax.int", False, False, False, (), False, ()),
    ("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
     "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
     "layer_norm", False, False, False, (), False, ()),
    ("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
     "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
     "embedding", False, False, False, (), False, ()),
    ("cat(Tensor[] tensors, int dim=0) -> Tensor",
     "cat", False, False, False, (), False, ()),
    ("cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
     "cat.out", False, True, False, ("out",), False, ("out",)),
    ("stack(Tensor[] tensors, int dim=0) -> Tensor",
     "stack", False, False, False, (), False, ()),
    ("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
     "chunk", False, False, True, (), False, ()),
    ("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
     "unbind.int", False, False, True, (), False, ()),
    ("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
     "narrow", False, False, True, (), False, ()),
    ("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
     "SymInt? storage_offset=None) -> Tensor(a)",
     "as_strided", False, False, True, (), False, ()),
    ("as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, "
     "SymInt? storage_offset=None) -> Tensor(a!)",
     "as_strided_", True, False, False, ("self",), False, ()),
    ("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
     "expand", False, False, True, (), False, ("implicit",)),
    ("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)",
     "view.dtype", False, False, True, (), False, ()),
    ("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
     "MemoryFormat? memory_format=None) -> Tensor(a)",
     "to.dtype", False, False, True, (), False, ()),
    ("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
     "(Tensor U, Tensor S, Tensor Vh)",
     "linalg_svd", False, False, False, (), True, ("driver",)),
    ("linalg_svd.U(Tensor A, bool full_matrices=True, *, str? driver=None, Tensor(a!) U, "
     "Tensor(b!) S, Tensor(c!) Vh) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh)",
     "linalg_svd.U", False, True, False, ("U", "S", "Vh"), True, ("driver", "U", "S", "Vh")),
    ("_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]",
     "_foreach_add.Scalar", False, False, False, (), False, ()),
    ("_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
     "_foreach_add_.Scalar", True, False, False, ("self",), True, ()),
    ("_foreach_add.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()",
     "_foreach_add.Scalar_out", False, True, False, ("out",), True, ("out",)),
    ("_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, "
     "Tensor inv_scale) -> ()",
     "_amp_foreach_non_finite_check_and_unscale_", True, False, False, ("self", "found_inf"),
     True, ()),
    ("_fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
     "Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, "
     "float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, "
     "bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
     "_fused_adam_", True, False, False,
     ("self", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"), True,
     ("lr", "beta1", "beta2", "weight_decay", "eps", "amsgrad", "maximize", "grad_scale",
      "found_inf")),
    ("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "__iand__.Tensor", True, False, False, ("self",), False, ()),
    ("__and__.Tensor(Tensor self, Tensor other) -> Tensor",
     "__and__.Tensor", False, False, False, (), False, ()),
    ("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
     "squeeze_.dim", True, False, False, ("self",), False, ()),
    ("set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
     "set_.source_Storage", True, False, False, ("self",), False, ()),
    ("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
     "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
     "empty.memory_format", False, False, False, (), False,
     ("dtype", "layout", "device", "pin_memory", "memory_format")),
    ("randn.generator(SymInt[] size, *, Generator? generator, ScalarType? dtype=None, "
     "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     "randn.generator", False, False, False, (), False,
     ("generator", "dtype", "layout", "device", "pin_memory")),
    ("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
     "SymInt ignore_index=-100) -> Tensor",
     "nll_loss", False, False, False, (), False, ()),
    ("native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
     "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
     "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
     "native_batch_norm_backward", False, False, False, (), True, ()),
    ("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
     "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
     "max_pool2d", False, False, False, (), False, ()),
    ("upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
     "float[]? scale_factors) -> Tensor",
     "upsample_bilinear2d.vec", False, False, False, (), False, ()),
    ("gelu(Tensor self, *, str approximate='none') -> Tensor",
     "gelu", False, False, False, (), False, ("approximate",)),
    ("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
     "contiguous", False, False, True, (), False, ("memory_format",)),
    ("rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
     "bool training=False, Generator? generator=None) -> Tensor",
     "rrelu", False, False, False, (), False, ()),
    ("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
     "hardtanh", False, False, False, (), False, ()),
    ("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
     "bool equal_nan=False) -> bool",
     "allclose", False, False, False, (), False, ()),
    ("quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
     "str interpolation='linear') -> Tensor",
     "quantile", False, False, False, (), False, ("interpolation",)),
    ("qscheme(Tensor self) -> QScheme",
     "qscheme", False, False, False, (), False, ()),
    ("sym_size.int(Tensor self, int dim) -> SymInt",
     "sym_size.int", False, False, False, (), False, ()),
    ("dropout(Tensor input, float p, bool train) -> Tensor",
     "dropout", False, False, False, (), False, ()),
]  # fmt: skip

ALL = SPEC + [row[0] for row in REAL]


def _canonical(text: str) -> str:
    """What str() is expected to print back for one of the texts above."""
    return text.replace("(a -> *)", "(a)").replace("'", '"')


@pytest.mark.parametrize("text", ALL)
def test_round_trip(text):
    s = parse_schema(text)
    again = parse_schema(str(s))
    assert again == s
    assert hash(again) == hash(s)
    assert str(again) == str(s) == _canonical(text)
    assert _Parser(text).schema() == s  # the regex fast path agrees with the token parser


@pytest.mark.parametrize("row", REAL, ids=[row[1] for row in REAL])
def test_properties(row):
    text, qualified, inplace, out, view, mutated, as_tuple, kwonly = row
    s = parse_schema(text)
    assert s.qualified_name == qualified
    assert (s.is_inplace, s.is_out, s.is_view) == (inplace, out, view)
    assert s.mutated_arguments == mutated
    assert s.returns_tuple is as_tuple
    assert tuple(a.name for a in s.kwarg_only) == kwonly
    assert all(a.kwarg_only for a in s.kwarg_only)
    assert not any(a.kwarg_only for a in s.positional)
    assert s.positional + s.kwarg_only == s.arguments


def test_name_parts():
    s = parse_schema("prims::sum(Tensor inp, int[]? dims) -> Tensor")
    assert (s.namespace, s.name, s.overload) == ("prims", "sum", "")
    s = parse_schema("add.Tensor(Tensor self, Tensor other) -> Tensor")
    assert (s.namespace, s.name, s.overload) == ("", "add", "Tensor")
    s = parse_schema("aten::__and__.Scalar(Tensor self, Scalar other) -> Tensor")
    assert (s.namespace, s.name, s.overload, s.qualified_name) == (
        "aten",
        "__and__",
        "Scalar",
        "aten::__and__.Scalar",
    )


def test_structure_of_max_dim_max():
    s = parse_schema(SPEC[5])
    t, w = SchemaType("Tensor"), AliasInfo("a", True)
    assert s.arguments == (
        Argument("self", t),
        Argument("dim", SchemaType("int")),
        Argument("keepdim", SchemaType("bool"), False),
        Argument("max", SchemaType("Tensor", alias=w), kwarg_only=True),
        Argument("max_values", SchemaType("Tensor", alias=AliasInfo("b", True)), kwarg_only=True),
    )
    assert s.returns == (
        Return("values", SchemaType("Tensor", alias=w)),
        Return("indices", SchemaType("Tensor", alias=AliasInfo("b", True))),
    )


def test_alias_forms():
    s = parse_schema(SPEC[6])
    assert s.arguments[0].type.alias == AliasInfo("a", False)
    assert s.returns[0].type == SchemaType("Tensor", is_list=True, alias=AliasInfo("a", False))
    assert s.returns[0].type.is_tensor_list
    assert str(s.returns[0].type) == "Tensor(a)[]"
    s = parse_schema("f(Tensor(a! -> *) x, Tensor(b!)? y) -> ()")
    assert s.arguments[0].type.alias == AliasInfo("a", True)
    assert s.arguments[1].type == SchemaType("Tensor", optional=True, alias=AliasInfo("b", True))
    assert str(s.arguments[1].type) == "Tensor(b!)?"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tensor", SchemaType("Tensor")),
        ("Tensor(a!)", SchemaType("Tensor", alias=AliasInfo("a", True))),
        ("Tensor(a)", SchemaType("Tensor", alias=AliasInfo("a", False))),
        ("Tensor(a!)[]", SchemaType("Tensor", is_list=True, alias=AliasInfo("a", True))),
        ("int[2]", SchemaType("int", is_list=True, size=2)),
        ("Tensor?[]", SchemaType("Tensor", is_list=True, elem_optional=True)),
        ("Tensor?[]?", SchemaType("Tensor", True, True, None, True)),
        ("ScalarType?", SchemaType("ScalarType", optional=True)),
        ("int[1]?", SchemaType("int", optional=True, is_list=True, size=1)),
        ("SymInt[]", SchemaType("SymInt", is_list=True)),
        ("float[]?", SchemaType("float", optional=True, is_list=True)),
        ("Dimname[1]", SchemaType("Dimname", is_list=True, size=1)),
        ("bool[3]", SchemaType("bool", is_list=True, size=3)),
    ],
)
def test_types(text, expected):
    typ = parse_schema(f"f({text} x) -> {text}").arguments[0].type
    assert typ == expected
    assert str(typ) == text
    assert typ.is_tensor is (expected.name == "Tensor")
    assert typ.is_tensor_list is (expected.name == "Tensor" and expected.is_list)


def _defaults(text: str) -> dict[str, object]:
    return {a.name: a.default for a in parse_schema(text).arguments}


def test_defaults_exact_values():
    d = _defaults(SPEC[9])
    expected = {
        "tensors": NO_DEFAULT,
        "dim": None,
        "eps": 1e-05,
        "reduction": "mean",
        "pad_mode": "reflect",
        "lo": -math.inf,
        "flag": True,
        "dtype": None,
        "memory_format": "contiguous_format",
        "layout": None,
        "device": None,
        "generator": None,
    }
    assert d == expected
    assert [type(v) for v in d.values()] == [type(v) for v in expected.values()]
    d = _defaults(
        "f(int a=-1, int b=0, float c=-0.5, float d=inf, float e=nan, Scalar f=1, float g=1.0, "
        "int[2] h=[0,0], int[2] i=[1, 1], int[] j=[], bool[3] k=[True, False, True], "
        "float l=1e5, int m=Mean, str n=\"a b,c\", str o='it\\'s', SymInt p=-100) -> ()"
    )
    assert d["a"] == -1 and type(d["a"]) is int
    assert d["b"] == 0 and type(d["b"]) is int
    assert d["c"] == -0.5 and d["d"] == math.inf and math.isnan(d["e"])
    assert d["f"] == 1 and type(d["f"]) is int
    assert d["g"] == 1.0 and type(d["g"]) is float
    assert d["h"] == (0, 0) and d["i"] == (1, 1) and d["j"] == ()
    assert d["k"] == (True, False, True)
    assert d["l"] == 100000.0 and type(d["l"]) is float
    assert (d["m"], d["n"], d["o"], d["p"]) == ("Mean", "a b,c", "it's", -100)


def test_nan_default_round_trips():
    s = parse_schema("f(float x=nan, float y=-nan, float[] z=[nan]) -> ()")
    assert parse_schema(str(s)) == s
    assert str(s) == "f(float x=nan, float y=nan, float[] z=[nan]) -> ()"


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("int dim=-1", "int dim=-1"),
        ("int[2] padding=[0, 0]", "int[2] padding=[0,0]"),
        ("str mode='mean'", 'str mode="mean"'),
        ("str s='a\"b\\\\c'", 'str s="a\\"b\\\\c"'),
        ("float eps=1e-05", "float eps=1e-05"),
        ("float lo=-inf", "float lo=-inf"),
        ("Tensor? bias=None", "Tensor? bias=None"),
        ("bool flag=True", "bool flag=True"),
        ("MemoryFormat m=contiguous_format", "MemoryFormat m=contiguous_format"),
        ("ScalarType dtype=\"float\"", "ScalarType dtype=float"),
        ("ScalarType dtype=\"True\"", 'ScalarType dtype="True"'),
        ("str s=\"\"", 'str s=""'),
        ("Tensor self", "Tensor self"),
    ],
)  # fmt: skip
def test_argument_str(text, rendered):
    arg = parse_schema(f"f({text}) -> ()").arguments[0]
    assert str(arg) == rendered
    assert parse_schema(f"f({rendered}) -> ()").arguments[0] == arg
    assert arg.has_default is ("=" in text)


def test_whitespace_tolerance():
    canonical = parse_schema(SPEC[0])
    for text in [
        "  add.Tensor( Tensor self ,Tensor other,*,Scalar alpha = 1 )->Tensor  ",
        "add . Tensor (\n\tTensor self,\n\tTensor other,\n\t*,\n\tScalar alpha=1\n) -> Tensor",
        "add.Tensor(Tensor  self, Tensor other, * , Scalar alpha= 1)  ->  Tensor",
    ]:
        assert parse_schema(text) == canonical
    s = parse_schema("f( Tensor ( a ! -> * ) x , int [ 2 ] ? y=[ 1 , 2 ] ) -> ( Tensor ( a ) [ ] )")
    assert str(s) == "f(Tensor(a!) x, int[2]? y=[1,2]) -> (Tensor(a)[])"


def test_returns_tuple_flag():
    assert parse_schema("f(Tensor x) -> (Tensor)").returns_tuple
    assert not parse_schema("f(Tensor x) -> Tensor").returns_tuple
    assert parse_schema("f(Tensor x) -> (Tensor)") != parse_schema("f(Tensor x) -> Tensor")
    assert str(parse_schema("f(Tensor x) -> (Tensor y)")) == "f(Tensor x) -> (Tensor y)"
    assert parse_schema("f() -> ()").returns == ()
    # Zero or several returns are always a tuple, even when constructed by hand.
    s = OpSchema("", "f", "", (), ())
    assert s.returns_tuple and str(s) == "f() -> ()"


def test_misc_accepted_forms():
    # A positional argument without default after one with a default is allowed.
    s = parse_schema("f(int a=1, int b) -> ()")
    assert [a.has_default for a in s.arguments] == [True, False]
    # A trailing '*' with no kwarg-only arguments after it.
    assert parse_schema("f(Tensor x, *) -> Tensor") == parse_schema("f(Tensor x) -> Tensor")
    # A single unparenthesized return may be named.
    assert parse_schema("f(Tensor x) -> Tensor y").returns == (Return("y", SchemaType("Tensor")),)


def test_dunder_names():
    # Only "__i...__" dunders are in-place; "__and__" with an out argument is an out variant.
    s = parse_schema("__and__.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
    assert (s.is_inplace, s.is_out, s.mutated_arguments) == (False, True, ("out",))
    s = parse_schema("__ior__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
    assert (s.is_inplace, s.is_out, s.mutated_arguments) == (True, False, ("self",))
    assert not parse_schema("__ior__.Scalar(Tensor self, Scalar other) -> Tensor").is_inplace


def test_hand_built_schema_round_trips():
    s = OpSchema(
        "myns",
        "blend_",
        "out",
        (
            Argument("self", SchemaType("Tensor", alias=AliasInfo("a", True))),
            Argument("w", SchemaType("float", is_list=True, size=2), (0.5, -1.0)),
            Argument("mode", SchemaType("str", optional=True), "linear", kwarg_only=True),
        ),
        (Return(None, SchemaType("Tensor", alias=AliasInfo("a", True))),),
    )
    assert str(s) == ('myns::blend_.out(Tensor(a!) self, float[2] w=[0.5,-1.0], *, str? mode="linear") -> Tensor(a!)')
    assert parse_schema(str(s)) == s
    assert s.is_inplace and not s.is_out and s.mutated_arguments == ("self",)


def test_no_default_sentinel():
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    assert pickle.loads(pickle.dumps(NO_DEFAULT)) is NO_DEFAULT
    assert copy.deepcopy(NO_DEFAULT) is NO_DEFAULT
    arg = Argument("x", SchemaType("int"))
    assert arg.default is NO_DEFAULT and not arg.has_default
    assert Argument("x", SchemaType("int"), None).has_default


def test_values_are_frozen_and_pickle():
    s = parse_schema(SPEC[5])
    with pytest.raises(AttributeError):
        s.name = "min"
    assert pickle.loads(pickle.dumps(s)) == s
    assert len({s, parse_schema(SPEC[5])}) == 1


BAD = [
    ("add(Tensor self -> Tensor", "expected ',' or ')'"),  # unbalanced parens
    ("add(Tensor self)) -> Tensor", "expected '->'"),
    ("add(Tensor(a! self) -> Tensor", "expected ')'"),
    ("add(Tensor self) -> (Tensor", "expected ',' or ')'"),
    ("add(Tensor self) -> Tensor)", "expected end of schema"),
    ("add(Tensor self) Tensor", "expected '->'"),  # missing ->
    ("add(Tensor self)", "expected '->'"),
    ("add(Foo self) -> Tensor", "unknown type 'Foo'"),
    ("add(Tensor self) -> Tensors", "unknown type 'Tensors'"),
    ("add(Tensor x, int x) -> Tensor", "duplicate argument name 'x'"),
    ("add(Tensor x, *, int x) -> Tensor", "duplicate argument name 'x'"),
    ("f() -> (Tensor a, Tensor a)", "duplicate return name 'a'"),
    ("add(Tensor x, *, *, int y) -> Tensor", "'*' given twice"),
    ("add(Tensor x) -> Tensor Tensor y", "expected end of schema"),  # trailing garbage
    ("add(Tensor x) -> Tensor;", "stray character ';'"),
    ("add(Tensor x) -> () ()", "expected end of schema"),
    ("(Tensor x) -> Tensor", "expected operator name"),  # empty name
    ("", "expected operator name"),
    (".out(Tensor x) -> Tensor", "expected operator name"),
    ("add.(Tensor x) -> Tensor", "expected overload name"),
    ("ns::(Tensor x) -> Tensor", "expected operator name"),
    ("add(Tensor) -> Tensor", "expected argument name"),
    ("add(Tensor x,) -> Tensor", "expected a type"),
    ("add(, Tensor x) -> Tensor", "expected a type"),
    ("add(int x=) -> Tensor", "expected a default value"),
    ("add(int[] x=[1,) -> Tensor", "expected a default value"),
    ('add(str x="abc) -> Tensor', "stray character '\"'"),
    ("add(int(a) x) -> Tensor", "alias annotation on non-Tensor type 'int'"),
    ("add(int[-1] x) -> Tensor", "expected a list size"),
    ("add(int[2.0] x) -> Tensor", "expected a list size"),
    ("add(Tensor x) -> int x=1", "expected end of schema"),
]


@pytest.mark.parametrize(("text", "what"), BAD)
def test_errors(text, what):
    with pytest.raises(ValueError, match="column") as info:
        parse_schema(text)
    message = str(info.value)
    assert message.startswith(f"invalid schema '{text}': ")
    assert what in message


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("add(Foo self) -> Tensor", 5),
        ("add(Tensor x, int x) -> Tensor", 19),
        ("add(Tensor self) Tensor", 18),
        ("add(Tensor self) -> Tensor )", 28),
        ("add(Tensor self", 16),
    ],
)
def test_error_columns(text, column):
    with pytest.raises(ValueError, match=f"at column {column}$"):
        parse_schema(text)


# ---------------------------------------------------------------------------------------------
# Property-based: random schemas from a small grammar.

IDENTS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    IDENTS,
    st.text(alphabet="ab_ ,()[]'\"\\-*=>", max_size=6),
)
DEFAULTS = st.one_of(SCALARS, st.lists(SCALARS, max_size=3).map(tuple))
SPACES = st.sampled_from(["", "", "", " ", "  ", "\n\t"])


@st.composite
def schema_types(draw):
    name = draw(st.sampled_from(["Tensor"] * 5 + sorted(KNOWN_TYPES)))
    alias = None
    if name == "Tensor" and draw(st.booleans()):
        alias = AliasInfo(draw(st.sampled_from(["a", "b", "c0"])), draw(st.booleans()))
    is_list = draw(st.booleans())
    return SchemaType(
        name,
        draw(st.booleans()),
        is_list,
        draw(st.none() | st.integers(0, 9)) if is_list else None,
        draw(st.booleans()) if is_list else False,
        alias,
    )


@st.composite
def schemas(draw):
    names = draw(st.lists(IDENTS, unique=True, max_size=6))
    n_positional = draw(st.integers(0, len(names)))
    args = tuple(
        Argument(n, draw(schema_types()), draw(st.just(NO_DEFAULT) | DEFAULTS), i >= n_positional)
        for i, n in enumerate(names)
    )
    ret_names = draw(st.lists(IDENTS, unique=True, max_size=3))
    returns = tuple(Return(draw(st.none() | st.just(n)), draw(schema_types())) for n in ret_names)
    if not returns and draw(st.booleans()):
        returns = (Return(draw(st.none() | IDENTS), draw(schema_types())),)
    return OpSchema(
        draw(st.just("") | IDENTS),
        draw(IDENTS),
        draw(st.just("") | IDENTS),
        args,
        returns,
        draw(st.booleans()),
    )


def _spell_value(draw, value, is_str_type):
    """Spell a default value independently of the module's renderer, in a random style."""
    if isinstance(value, tuple):
        inner = ("," + draw(SPACES)).join(_spell_value(draw, v, is_str_type) for v in value)
        return f"[{draw(SPACES)}{inner}{draw(SPACES)}]"
    if isinstance(value, str):
        ident = value.isidentifier() and value.isascii()
        if ident and not is_str_type and value not in ("True", "False", "None", "inf", "nan"):
            return value
        quote = draw(st.sampled_from(["'", '"']))
        return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _spell_type(draw, t):
    s = t.name
    if t.alias is not None:
        arrow = draw(st.sampled_from(["", " -> *"]))
        s += f"({draw(SPACES)}{t.alias}{arrow}{draw(SPACES)})"
    if t.is_list:
        size = "" if t.size is None else str(t.size)
        s += ("?" if t.elem_optional else "") + f"[{draw(SPACES)}{size}{draw(SPACES)}]"
    return s + ("?" if t.optional else "")


def _spell_schema(draw, s):
    """Spell ``s`` in ATen syntax with random whitespace and quoting."""
    sp = lambda: draw(SPACES)  # noqa: E731
    parts = []
    for a in s.arguments:
        if a.kwarg_only and "*" not in parts:
            parts.append("*")
        part = f"{_spell_type(draw, a.type)} {sp()}{a.name}"
        if a.has_default:
            part += f"{sp()}={sp()}{_spell_value(draw, a.default, a.type.name == 'str')}"
        parts.append(part)
    rets = [_spell_type(draw, r.type) + ("" if r.name is None else " " + r.name) for r in s.returns]
    rets = f"({sp()}{(sp() + ',' + sp()).join(rets)}{sp()})" if s.returns_tuple else rets[0]
    head = f"{s.namespace}{sp()}::{sp()}" if s.namespace else ""
    head += s.name + (f"{sp()}.{sp()}{s.overload}" if s.overload else "")
    args = (sp() + "," + sp()).join(parts)
    return f"{sp()}{head}{sp()}({sp()}{args}{sp()}){sp()}->{sp()}{rets}{sp()}"


@settings(max_examples=200, deadline=None)
@given(schemas())
def test_random_schema_round_trips(s):
    text = str(s)
    assert parse_schema(text) == s
    assert _Parser(text).schema() == s
    assert str(parse_schema(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.data(), schemas())
def test_random_spelling_parses(data, s):
    text = _spell_schema(data.draw, s)
    parsed = parse_schema(text)
    assert parsed == s
    assert _Parser(text).schema() == s
    assert parse_schema(str(parsed)) == parsed

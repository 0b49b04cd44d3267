"""Generate each overload's Python entry point from its schema.

The generated function has the schema's exact signature (so Python itself
rejects unknown or missing arguments, naming the op), coerces and checks each
argument once, ORs the dispatch keys of the tensor arguments and calls the
dispatcher with every argument positionally in schema order. Generating the
code once per overload keeps parsing and dict building out of the hot path.
"""

from __future__ import annotations

from . import _coerce, _errors, _requires_grad, errors, return_types
from ._device import device as _device_class
from ._dispatcher import Decline
from ._dtype import dtype as _dtype_class
from ._schema import NO_DEFAULT, OpSchema
from ._state import local
from ._tensor import Tensor

_SIMPLE_CHECKS = {
    "int": "_c.to_int",
    "SymInt": "_c.to_int",
    "float": "_c.to_float",
    "bool": "_c.to_bool",
    "str": "_c.to_str",
    "Scalar": "_c.to_scalar",
    "ScalarType": "_c.to_dtype",
    "Device": "_c.to_device",
}


def _coercion(schema: OpSchema, arg, strict_tensors: bool) -> list[str]:
    """Source lines that check/normalise one argument in place."""
    t, n = arg.type, arg.name
    where = f"{schema.qualified_name!r}, {n!r}"
    lines = []
    if t.name == "Tensor" and not t.is_list:
        fn = "_c.check_tensor" if strict_tensors else "_c.to_tensor"
        test = f"type({n}) is not _Tensor"
        if t.optional:
            test += f" and {n} is not None"
        # an argument the op writes or returns a view of gets a wrapped scalar of its own (see _coerce.scalar_tensor)
        written = ", True" if not strict_tensors and t.alias is not None else ""
        lines.append(f"    if {test}: {n} = {fn}({n}, {where}{written})")
    elif t.name == "Tensor":
        fn = "_c.to_tensor_list"
        lines.append(f"    {n} = {fn}({n}, {where}, {t.elem_optional!r}, {strict_tensors!r})")
    elif t.is_list:
        elem = _SIMPLE_CHECKS.get(t.name)
        if elem is not None:
            line = f"    {n} = _c.to_list({n}, {elem}, {t.size!r}, {where})"
            if t.optional:
                line = f"    if {n} is not None: {n} = _c.to_list({n}, {elem}, {t.size!r}, {where})"
            lines.append(line)
    else:
        fn = _SIMPLE_CHECKS.get(t.name)
        if fn is not None:
            test = f"type({n}) is not {_FAST_TYPES.get(t.name, 'object')}"
            if t.name == "Scalar":
                test = f"type({n}) not in _SCALARS"
            if t.optional:
                test += f" and {n} is not None"
            if arg.has_default:
                test = f"{n} is not _d_{n} and " + test
            lines.append(f"    if {test}: {n} = {fn}({n}, {where})")
    return lines


_FAST_TYPES = {
    "int": "int",
    "SymInt": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "ScalarType": "_DType",
    "Device": "_Device",
}


def _keys_expression(schema: OpSchema) -> str:
    """An expression ORing the key sets of every tensor argument."""
    parts = []
    for arg in schema.arguments:
        t, n = arg.type, arg.name
        if t.name != "Tensor":
            continue
        if t.is_list:
            parts.append(f"_c.list_keys({n})")
        elif t.optional:
            parts.append(f"(0 if {n} is None else {n}._keys)")
        else:
            parts.append(f"{n}._keys")
    return " | ".join(parts) or "0"


def make_entry(op, dispatch, factory_keys, cache: dict, declined) -> callable:
    """Build the callable users invoke for ``op`` (an OpOverload).

    ``dispatch(op, keyset, args)`` runs the call; ``factory_keys(args)``
    gives the key set of calls without tensor arguments (from ``device=``).
    ``cache`` is the dict of resolved kernels (key set -> callable) owned by the
    dispatcher; ``declined(op, keyset, args, exc)`` runs the next candidate after
    the cached kernel raised ``Decline`` (a ``try`` costs nothing until it raises).
    """
    schema = op.schema
    params, names, seen_star = [], [], False
    for arg in schema.arguments:
        if arg.kwarg_only and not seen_star:
            params.append("*")
            seen_star = True
        if arg.default is NO_DEFAULT:
            params.append(arg.name)
        else:
            params.append(f"{arg.name}=_d_{arg.name}")
        names.append(arg.name)
    # Factories with TensorOptions take PyTorch's Python-level ``requires_grad=`` too.
    options = any(a.name == "pin_memory" and a.kwarg_only for a in schema.arguments) and "requires_grad" not in names
    if options:
        params.extend(["requires_grad=False"] if seen_star else ["*", "requires_grad=False"])
    where = f"{schema.qualified_name!r}"
    strict = op.kind == "prim"
    body = []
    for arg in schema.arguments:
        body.extend(_coercion(schema, arg, strict))
    has_tensors = any(a.type.name == "Tensor" for a in schema.arguments)
    call_args = ", ".join(names)
    if has_tensors:
        body.append(f"    ks = {_keys_expression(schema)}")
        if not any(a.type.name == "Tensor" and not a.type.optional and not a.type.is_list for a in schema.arguments):
            body.append("    if not ks: ks = _factory_keys(_op, (" + call_args + ("," if names else "") + "))")
    else:
        body.append("    ks = _factory_keys(_op, (" + call_args + ("," if names else "") + "))")
    body.append("    ks = (ks | _st.included) & ~_st.excluded")
    args_tuple = f"({call_args}{',' if names else ''})"
    named = return_types.for_schema(schema)
    if options:
        body.append(f"    if requires_grad: return _rg(_dispatch(_op, ks, {args_tuple}), {where})")
    body.append("    kernel = _cache.get(ks)")
    # Errors raised inside the op leave it as PyTorch's types too (see opweave.errors).
    wrap = "_named(" if named is not None else "("  # several named returns: PyTorch's return_types named tuple
    written = [
        a.name
        for a in schema.arguments
        if a.name in schema.mutated_arguments and a.type.name == "Tensor" and not a.type.is_list
    ]
    body.append("    try:")
    if not written:
        body.append(f"        if kernel is None: return {wrap}_dispatch(_op, ks, {args_tuple}))")
        body.append(f"        try: return {wrap}kernel({call_args}))")
        body.append(f"        except _Decline as exc: return {wrap}_declined(_op, ks, {args_tuple}, exc))")
    else:  # an in-place or out= op bumps the version counter of each storage it wrote (autograd checks it)
        body.append(f"        if kernel is None: _returned = _dispatch(_op, ks, {args_tuple})")
        body.append("        else:")
        body.append(f"            try: _returned = kernel({call_args})")
        body.append(f"            except _Decline as exc: _returned = _declined(_op, ks, {args_tuple}, exc)")
        for n in written:  # the storage's version counter, inline for a required tensor (its storage may be lazy)
            optional = next(a.type.optional for a in schema.arguments if a.name == n)
            bump = f"_c.bump_version({n})" if optional else f"({n}._st or {n}._storage).version += 1"
            body.append("        " + bump)
        body.append(f"        return {wrap}_returned)")
    body.append("    except (ValueError, TypeError) as exc:")
    body.append("        new = _from_op(exc)")
    body.append("        if new is exc: raise")
    body.append("        raise new from exc.__cause__")
    py_name = "_entry"
    # errors leaving the op name it (``_errors``); a try costs nothing on the path without an exception
    body = ["    try:"] + ["    " + line for line in body]
    body += ["    except _NAMED as exc:", "        _name_op(exc, _op)", "        raise"]
    body += ["    except MemoryError as exc:", "        raise _out_of_memory(exc, _op) from exc"]
    body += ["    except OverflowError as exc:", "        raise _overflow(exc, _op) from exc"]
    source = f"def {py_name}({', '.join(params)}):\n" + "\n".join(body) + "\n"
    env = {
        "_c": _coerce,
        "_NAMED": _errors.NAMED,
        "_name_op": _errors.name_op,
        "_out_of_memory": _errors.out_of_memory,
        "_overflow": _errors.overflow,
        "_Tensor": Tensor,
        "_op": op,
        "_cache": cache,
        "_Decline": Decline,
        "_declined": declined,
        "_st": local(),
        "_dispatch": dispatch,
        "_factory_keys": factory_keys,
        "_SCALARS": frozenset({bool, int, float, complex}),
        "_DType": _dtype_class,
        "_Device": _device_class,
        "_named": return_types.wrapper(named),
        "_from_op": errors.from_op,
        "_rg": _requires_grad.factory_result,
    }
    for arg in schema.arguments:
        if arg.default is not NO_DEFAULT:
            env[f"_d_{arg.name}"] = _coerce.default_value(arg)
    exec(compile(source, f"<opweave op {schema.qualified_name}>", "exec"), env)
    fn = env[py_name]
    fn.__code__ = fn.__code__.replace(co_name=schema.qualified_name, co_qualname=schema.qualified_name)
    fn.__name__ = fn.__qualname__ = schema.qualified_name
    fn.__doc__ = op.__doc__
    return fn

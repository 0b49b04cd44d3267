"""Parser for ATen-syntax operator schema strings (as in PyTorch's ``native_functions.yaml``).

>>> s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
>>> s.qualified_name, s.arguments[2].default, s.arguments[2].kwarg_only
('add.Tensor', 1, True)

Every object is an immutable, hashable value, and ``parse_schema(str(s)) == s`` for any
schema ``s`` returned by :func:`parse_schema`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = [
    "KNOWN_TYPES",
    "NO_DEFAULT",
    "AliasInfo",
    "Argument",
    "OpSchema",
    "Return",
    "SchemaType",
    "parse_schema",
]

#: Base type names accepted in a schema (anything else is a syntax error).
KNOWN_TYPES = frozenset(
    [
        "Tensor",
        "int",
        "SymInt",
        "float",
        "SymFloat",
        "bool",
        "SymBool",
        "str",
        "Scalar",
        "ScalarType",
        "Layout",
        "Device",
        "MemoryFormat",
        "Generator",
        "Dimname",
        "Storage",
        "Stream",
        "QScheme",
        "Any",
        # opaque packed-weight objects of the quantized:: ops (PyTorch spells them
        # __torch__.torch.classes.quantized.LinearPackedParamsBase etc.)
        "LinearPackedParamsBase",
        "Conv2dPackedParamsBase",
    ]
)


class _NoDefault:
    """Type of :data:`NO_DEFAULT`, the marker for an argument without a default value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()

_NAN = float("nan")  # one shared object, so that equal schemas with nan defaults compare equal
_CONSTANTS = {"True": True, "False": False, "None": None, "inf": math.inf, "nan": _NAN}
_IDENT = re.compile(r"[A-Za-z_]\w*", re.ASCII)
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<id>[A-Za-z_]\w*)
      | (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<op>->|::|[-()\[\],.?!*=])
      | (?P<bad>\S)
    )""",
    re.VERBOSE | re.ASCII | re.DOTALL,
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """Alias annotation of a Tensor: ``a`` in ``Tensor(a)``, writable for ``Tensor(a!)``."""

    set: str
    is_write: bool = False

    def __str__(self) -> str:
        return self.set + "!" if self.is_write else self.set


@dataclass(frozen=True, slots=True)
class SchemaType:
    """An argument or return type such as ``Tensor(a!)``, ``int[2]``, ``Tensor?[]``, ``int[]?``."""

    name: str
    optional: bool = False
    is_list: bool = False
    size: int | None = None
    elem_optional: bool = False
    alias: AliasInfo | None = None

    @property
    def is_tensor(self) -> bool:
        """True for ``Tensor`` in any form (optional, list, aliased)."""
        return self.name == "Tensor"

    @property
    def is_tensor_list(self) -> bool:
        """True for ``Tensor[]`` in any form (``Tensor?[]``, ``Tensor(a!)[]``, ...)."""
        return self.is_list and self.name == "Tensor"

    def __str__(self) -> str:
        s = self.name if self.alias is None else f"{self.name}({self.alias})"
        if self.is_list:
            size = "" if self.size is None else str(self.size)
            s += f"?[{size}]" if self.elem_optional else f"[{size}]"
        return s + "?" if self.optional else s


@dataclass(frozen=True, slots=True)
class Argument:
    """A schema argument; ``default`` is a Python value, or :data:`NO_DEFAULT` when absent."""

    name: str
    type: SchemaType
    default: object = NO_DEFAULT
    kwarg_only: bool = False

    @property
    def has_default(self) -> bool:
        """True when the argument declares a default value (``None`` included)."""
        return self.default is not NO_DEFAULT

    def __str__(self) -> str:
        if self.default is NO_DEFAULT:
            return f"{self.type} {self.name}"
        return f"{self.type} {self.name}={_render(self.default, self.type.name == 'str')}"


@dataclass(frozen=True, slots=True)
class Return:
    """A schema return value, optionally named (``Tensor values``)."""

    name: str | None
    type: SchemaType

    def __str__(self) -> str:
        return str(self.type) if self.name is None else f"{self.type} {self.name}"


@dataclass(frozen=True, slots=True)
class OpSchema:
    """A parsed operator schema.

    ``returns_tuple`` is True when the returns were written in parentheses; it is forced to
    True unless there is exactly one return (zero or several are always parenthesized).
    """

    namespace: str
    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    returns_tuple: bool = False
    _text: str | None = field(default=None, init=False, repr=False, compare=False)  # str(self), made once

    def __post_init__(self) -> None:
        if len(self.returns) != 1 and not self.returns_tuple:
            object.__setattr__(self, "returns_tuple", True)

    @property
    def qualified_name(self) -> str:
        """``namespace::name.overload``, leaving out the parts that are empty."""
        name = f"{self.namespace}::{self.name}" if self.namespace else self.name
        return f"{name}.{self.overload}" if self.overload else name

    @property
    def positional(self) -> tuple[Argument, ...]:
        """Arguments before the ``*`` marker."""
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def kwarg_only(self) -> tuple[Argument, ...]:
        """Arguments after the ``*`` marker."""
        return tuple(a for a in self.arguments if a.kwarg_only)

    @property
    def mutated_arguments(self) -> tuple[str, ...]:
        """Names of the arguments with a write alias (``Tensor(a!)``)."""
        return tuple(a.name for a in self.arguments if _writes(a.type))

    @property
    def is_inplace(self) -> bool:
        """Name is ``foo_`` or ``__ifoo__`` and some argument is write-aliased."""
        n = self.name
        dunder = len(n) > 4 and n.startswith("__") and n.endswith("__")
        named = n.startswith("__i") if dunder else n.endswith("_")
        return named and any(_writes(a.type) for a in self.arguments)

    @property
    def is_out(self) -> bool:
        """Some kwarg-only Tensor (or Tensor list) argument is write-aliased."""
        return any(a.kwarg_only and a.type.name == "Tensor" and _writes(a.type) for a in self.arguments)

    @property
    def is_view(self) -> bool:
        """Some return carries a non-write alias (``-> Tensor(a)``)."""
        return any(r.type.alias is not None and not r.type.alias.is_write for r in self.returns)

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._render()
            object.__setattr__(self, "_text", text)
        return text

    def _render(self) -> str:
        parts = []
        for a in self.arguments:
            if a.kwarg_only and "*" not in parts:
                parts.append("*")
            parts.append(str(a))
        rets = ", ".join(map(str, self.returns))
        rets = f"({rets})" if self.returns_tuple else rets
        return f"{self.qualified_name}({', '.join(parts)}) -> {rets}"


def _writes(t: SchemaType) -> bool:
    return t.alias is not None and t.alias.is_write


def _render(value: object, quote: bool) -> str:
    """Render a default value in ATen syntax; ``quote`` forces strings into quotes."""
    if value is None or isinstance(value, (bool, int)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if not quote and value not in _CONSTANTS and _IDENT.fullmatch(value):
            return value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple):
        return "[" + ",".join(_render(v, quote) for v in value) + "]"
    raise TypeError(f"cannot render default value {value!r}")


# Fast path: one regex match per argument, whose text is looked up in a cache (schemas repeat
# "Tensor self", "Scalar alpha=1", ... a lot); on a miss, one more regex splits it into type, name
# and default, the type and default texts again cached. Anything else (odd spacing, errors) goes
# to the token parser, which is exact and reports the error column.
_HEAD = re.compile(r"\s*(?:([A-Za-z_]\w*)::)?([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?\((\s*\))?", re.A)
_ARG = re.compile(
    r"""\s*(?:(\*)\s*|(  # "*" alone, or the text of one argument up to the next , or )
        (?:[^,()\[\]"']|\([^()]*\)|\[[^\[\]"']*\]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')+
    ))([,)])""",
    re.VERBOSE | re.ASCII | re.DOTALL,
)
_ARG_PARTS = re.compile(
    r"\s*([A-Za-z]\w*(?:\([^()]*\))?\??(?:\[\d*\]\??)?)\s+([A-Za-z_]\w*)\s*(?:=\s*(.*?))?\s*",
    re.ASCII | re.DOTALL,
)
_ARROW = re.compile(r"\s*->")
_TYPES: dict[tuple, SchemaType] = {}  # interned types, by their parts
_PIECES: dict[str, object] = {}  # type text -> SchemaType; "=" + default text -> value
_ARGS: dict[tuple[str, bool], Argument] = {}
_RETURNS: dict[str, tuple[tuple[Return, ...], bool]] = {}
_CACHE_LIMIT = 8192
_MISS = object()


def _memo(cache: dict, key: object, parse, *args: object) -> object:
    """``cache[key]``, computed as ``parse(*args)`` on a miss."""
    value = cache.get(key, _MISS)
    if value is _MISS:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        value = cache[key] = parse(*args)
    return value


def _parse_piece(text: str, parse) -> object:
    """Parse the whole of ``text`` with the ``_Parser`` method ``parse``."""
    parser = _Parser(text)
    value = parse(parser)
    parser.end()
    return value


def _argument(raw: str, kwarg_only: bool) -> Argument:
    """Parse one argument's text, reusing the types and defaults parsed before."""
    m = _ARG_PARTS.fullmatch(raw)
    if m is None:
        return _Parser(raw).lone_argument(kwarg_only)
    type_text, name, default_text = m.groups()
    typ = _memo(_PIECES, type_text, _parse_piece, type_text, _Parser.type)
    if default_text is None:
        return Argument(name, typ, NO_DEFAULT, kwarg_only)
    default = _memo(_PIECES, "=" + default_text, _parse_piece, default_text, _Parser.default)
    return Argument(name, typ, default, kwarg_only)


def _parse_fast(text: str) -> OpSchema | None:
    """Parse a well-formed, conventionally spaced schema; None when the token parser must."""
    m = _HEAD.match(text)
    if m is None:
        return None
    namespace, name, overload, empty = m.groups()
    pos = m.end()
    args: list[Argument] = []
    names: set[str] = set()
    kwarg_only = False
    while empty is None:
        m = _ARG.match(text, pos)
        if m is None:
            return None
        star, raw, sep = m.groups()
        pos = m.end()
        if star:
            if kwarg_only:
                return None
            kwarg_only = True
        else:
            key = (raw, kwarg_only)
            arg = _ARGS.get(key) or _memo(_ARGS, key, _argument, raw, kwarg_only)
            if arg.name in names:
                return None
            names.add(arg.name)
            args.append(arg)
        if sep == ")":
            break
    m = _ARROW.match(text, pos)
    if m is None:
        return None
    raw = text[m.end() :]
    returns = _memo(_RETURNS, raw, _parse_piece, raw, _Parser.returns)
    return OpSchema(namespace or "", name, overload or "", tuple(args), *returns)


class _Parser:
    """Recursive-descent parser over a token list; one instance per string parsed."""

    __slots__ = ("i", "text", "toks")

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = [(m.lastgroup, m[m.lastindex], m.start(m.lastindex)) for m in _TOKEN.finditer(text)]
        self.toks.append(("end", "", len(text)))
        self.i = 0

    def error(self, what: str, tok: tuple | None = None) -> ValueError:
        """Error about ``tok`` (default: the current token), e.g. "unknown type 'Foo'"."""
        kind, val, pos = tok or self.toks[self.i]
        found = {"end": "end of input", "bad": f"stray character {val!r}"}.get(kind, repr(val))
        what = what.replace("{}", found)
        return ValueError(f"invalid schema '{self.text}': {what} at column {pos + 1}")

    def accept(self, op: str) -> bool:
        if self.toks[self.i][1] == op:  # quoted strings keep their quotes, so never match
            self.i += 1
            return True
        return False

    def expect(self, op: str, what: str = "") -> None:
        if not self.accept(op):
            raise self.error(f"expected {what or repr(op)}, found {{}}")

    def ident(self, what: str) -> str:
        kind, val, _ = self.toks[self.i]
        if kind != "id":
            raise self.error(f"expected {what}, found {{}}")
        self.i += 1
        return val

    def end(self, what: str = "end of schema") -> None:
        if self.toks[self.i][0] != "end":
            raise self.error(f"expected {what}, found {{}}")

    def sequence(self, item, close: str) -> list:
        """Parse ``item (',' item)* close``."""
        items = [item()]
        while not self.accept(close):
            self.expect(",", f"',' or '{close}'")
            items.append(item())
        return items

    def schema(self) -> OpSchema:
        namespace, name = "", self.ident("operator name")
        if self.accept("::"):
            namespace, name = name, self.ident("operator name")
        overload = self.ident("overload name") if self.accept(".") else ""
        self.expect("(")
        args: list[Argument] = []
        seen: set[str] = set()
        kwarg_only = False
        closed = self.accept(")")
        while not closed:
            if self.accept("*"):
                if kwarg_only:
                    raise self.error("'*' given twice", self.toks[self.i - 1])
                kwarg_only = True
            else:
                args.append(self.argument(kwarg_only, seen))
            closed = self.accept(")")
            if not closed:
                self.expect(",", "',' or ')'")
        self.expect("->")
        returns = self.returns()
        self.end()
        return OpSchema(namespace, name, overload, tuple(args), *returns)

    def argument(self, kwarg_only: bool, seen: set[str]) -> Argument:
        typ = self.type()
        name = self.ident("argument name")
        if name in seen:
            raise self.error("duplicate argument name {}", self.toks[self.i - 1])
        seen.add(name)
        default = self.default() if self.accept("=") else NO_DEFAULT
        return Argument(name, typ, default, kwarg_only)

    def lone_argument(self, kwarg_only: bool) -> Argument:
        """Parse the whole text as one argument."""
        arg = self.argument(kwarg_only, set())
        self.end("',' or ')'")
        return arg

    def returns(self) -> tuple[tuple[Return, ...], bool]:
        """Parse the returns; also say whether they were parenthesized."""
        seen: set[str] = set()
        if self.accept("("):
            returns = [] if self.accept(")") else self.sequence(lambda: self.ret(seen), ")")
            paren = True
        else:
            returns, paren = [self.ret(seen)], False
        return tuple(returns), paren

    def ret(self, seen: set[str]) -> Return:
        typ = self.type()
        kind, val, _ = self.toks[self.i]
        if kind != "id":
            return Return(None, typ)
        if val in seen:
            raise self.error("duplicate return name {}")
        seen.add(val)
        self.i += 1
        return Return(val, typ)

    def type(self) -> SchemaType:
        kind, name, _ = tok = self.toks[self.i]
        if kind != "id":
            raise self.error("expected a type, found {}")
        if name not in KNOWN_TYPES:
            raise self.error("unknown type {}")
        self.i += 1
        alias = None
        if self.accept("("):
            if name != "Tensor":
                raise self.error("alias annotation on non-Tensor type {}", tok)
            alias_set = self.ident("alias set name")
            write = self.accept("!")
            if self.accept("->"):
                self.expect("*")
            self.expect(")")
            alias = AliasInfo(alias_set, write)
        optional = self.accept("?")
        if self.accept("["):
            size = None
            kind, val, _ = self.toks[self.i]
            if kind == "num":
                if not val.isdigit():
                    raise self.error("expected a list size, found {}")
                size = int(val)
                self.i += 1
            self.expect("]")
            key = (name, self.accept("?"), True, size, optional, alias)
        else:
            key = (name, optional, False, None, False, alias)
        return _TYPES.get(key) or _memo(_TYPES, key, SchemaType, *key)

    def default(self) -> object:
        if self.accept("["):
            return () if self.accept("]") else tuple(self.sequence(self.value, "]"))
        return self.value()

    def value(self) -> object:
        kind, val, _ = self.toks[self.i]
        self.i += 1
        if kind == "num":
            return float(val) if "." in val or "e" in val or "E" in val else int(val)
        if kind == "id":
            return _CONSTANTS.get(val, val)
        if kind == "str":
            val = val[1:-1]
            return _ESCAPE.sub(r"\1", val) if "\\" in val else val
        if val == "-" and self.toks[self.i][1] in ("inf", "nan"):
            self.i += 1
            return -math.inf if self.toks[self.i - 1][1] == "inf" else _NAN
        self.i -= 1
        raise self.error("expected a default value, found {}")


def parse_schema(text: str) -> OpSchema:
    """Parse an ATen schema such as ``"add.Tensor(Tensor self, Tensor other) -> Tensor"``.

    Raises ``ValueError("invalid schema '<text>': <what> at column N")`` (1-based column) on
    any syntax error, unknown type name, duplicate argument name or repeated ``*``.
    """
    try:
        schema = _parse_fast(text)
    except ValueError:
        schema = None
    return _Parser(text).schema() if schema is None else schema

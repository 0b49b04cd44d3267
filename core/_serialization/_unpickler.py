"""Unpicklers for ``data.pkl``: the restricted one (``weights_only=True``) and the trusted one.

The restricted unpickler is a small interpreter of the binary pickle opcodes (protocols
2 to 5). It never imports anything: a ``GLOBAL`` is looked up in the load's table
(PyTorch's rebuild functions, storage classes, dtypes, containers; see ``_rebuild``)
and in the user's allowlist; any other name raises ``pickle.UnpicklingError`` naming
it. ``REDUCE`` and ``NEWOBJ`` call only objects that came from those tables, ``BUILD``
sets state only on ``OrderedDict`` and allowlisted classes, ``APPEND`` only grows
lists and ``SETITEM`` only fills dicts. Nothing else of the file runs.

The trusted unpickler (``weights_only=False``) is :class:`pickle.Unpickler`: it can run
any code the file names, and is for files you trust.
"""

from __future__ import annotations

import _compat_pickle
import collections
import io
import pickle
import struct
from pickle import decode_long

from . import _allowlist
from ._rebuild import MapLocationError, bad

_UNPACK_I = struct.Struct("<i").unpack
_UNPACK_H = struct.Struct("<H").unpack
_UNPACK_L = struct.Struct("<I").unpack
_UNPACK_Q = struct.Struct("<Q").unpack
_UNPACK_D = struct.Struct(">d").unpack


def _hint(full: str) -> str:
    return (
        f"If you trust the file, allowlist it with opweave.serialization.add_safe_globals([{full}]) or the "
        f"opweave.serialization.safe_globals([{full}]) context manager, or load the file with "
        "weights_only=False (only for files you trust: it runs any code the file names)"
    )


class RestrictedUnpickler:
    """Loads a pickle admitting only the load's table and the user's allowlist (see the module docstring)."""

    def __init__(self, data: bytes, table: dict, persistent_load, where: str, encoding: str = "utf-8"):
        self._file = io.BytesIO(data)
        self._encoding = encoding
        self._size = len(data)
        self._table = table
        self._persistent_load = persistent_load
        self._where = where
        self._user = _allowlist.user_globals()
        self._callables = {id(v) for v in table.values()} | {id(v) for v in self._user.values()}
        self._user_types = tuple(v for v in self._user.values() if isinstance(v, type))

    # -- reading -----------------------------------------------------------------------------------

    def _read(self, n: int) -> bytes:
        if n < 0 or n > self._size - self._file.tell():
            raise bad(f"{self._where}: the pickle is truncated (an item of {n} bytes runs past its end)")
        return self._file.read(n)

    def _readline(self) -> str:
        line = self._file.readline(1024)
        if not line.endswith(b"\n"):
            raise bad(f"{self._where}: the pickle is truncated or names a global longer than 1024 bytes")
        try:
            return line[:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise bad(f"{self._where}: a global's name is not UTF-8") from None

    # -- globals -----------------------------------------------------------------------------------

    def _global(self, module: str, name: str):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names that protocol 2 writes (__builtin__)
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module.split(".")[0] in _allowlist.BLOCKED_MODULES or full in _allowlist.BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"{self._where}: weights_only=True refuses GLOBAL {full}: module {module} is blocked "
                "(even when allowlisted)"
            )
        found = self._table.get((module, name), _MISSING)
        if found is _MISSING:
            found = self._user.get(full, _MISSING)
        if found is _MISSING:
            raise pickle.UnpicklingError(
                f"{self._where}: weights_only=True refuses GLOBAL {full}: it is not an allowed global. " + _hint(full)
            )
        return found

    # -- the interpreter ---------------------------------------------------------------------------

    def load(self):
        """Interpret the pickle and return its object."""
        try:
            return self._run()
        except (pickle.UnpicklingError, MapLocationError):
            raise
        except (IndexError, KeyError, TypeError, ValueError, OverflowError, AttributeError, struct.error) as exc:
            raise bad(f"{self._where}: malformed pickle ({type(exc).__name__}: {exc})") from None

    def _run(self):
        self._stack: list = []
        self._metastack: list = []
        self._memo: dict = {}
        self._result = _MISSING
        handlers = self._handlers()
        read = self._file.read
        while self._result is _MISSING:
            key = read(1)
            if not key:
                raise bad(f"{self._where}: the pickle ends without STOP (truncated)")
            handler = handlers.get(key[0])
            if handler is None:
                name = _NAMES.get(key[0], f"0x{key[0]:02x}")
                raise bad(f"{self._where}: weights_only=True does not support the pickle opcode {name}")
            handler()
        return self._result

    def _handlers(self) -> dict:
        """Opcode -> handler; every opcode not listed is refused."""
        read = self._read
        push = self._push

        def constant(value):
            return lambda: push(value)

        def integer(n, unpack):
            return lambda: push(unpack(read(n))[0])

        def string(nbytes, kind):
            return lambda: self._string(nbytes, kind)

        table = {
            _OP["NONE"]: constant(None),
            _OP["NEWTRUE"]: constant(True),
            _OP["NEWFALSE"]: constant(False),
            _OP["EMPTY_LIST"]: lambda: push([]),
            _OP["EMPTY_DICT"]: lambda: push({}),
            _OP["EMPTY_TUPLE"]: lambda: push(()),
            _OP["EMPTY_SET"]: lambda: push(set()),
            _OP["BININT1"]: lambda: push(read(1)[0]),
            _OP["BININT2"]: integer(2, _UNPACK_H),
            _OP["BININT"]: integer(4, _UNPACK_I),
            _OP["BINFLOAT"]: integer(8, _UNPACK_D),
            _OP["LONG1"]: lambda: push(decode_long(read(read(1)[0]))),
            _OP["LONG4"]: self._long4,
            _OP["MARK"]: self._mark,
            _OP["POP"]: lambda: self._stack.pop(),
            _OP["POP_MARK"]: self._pop_mark,
            _OP["DUP"]: lambda: push(self._stack[-1]),
            _OP["TUPLE"]: lambda: push(tuple(self._pop_mark())),
            _OP["TUPLE1"]: self._tuple1,
            _OP["TUPLE2"]: self._tuple2,
            _OP["TUPLE3"]: self._tuple3,
            _OP["LIST"]: lambda: push(self._pop_mark()),
            _OP["DICT"]: self._dict_op,
            _OP["APPEND"]: self._append,
            _OP["APPENDS"]: self._appends,
            _OP["SETITEM"]: self._setitem,
            _OP["SETITEMS"]: self._setitems,
            _OP["ADDITEMS"]: self._additems,
            _OP["FROZENSET"]: lambda: push(frozenset(self._pop_mark())),
            _OP["GLOBAL"]: self._global_op,
            _OP["STACK_GLOBAL"]: self._stack_global,
            _OP["REDUCE"]: self._reduce,
            _OP["NEWOBJ"]: self._newobj,
            _OP["NEWOBJ_EX"]: self._newobj_ex,
            _OP["BUILD"]: self._build_op,
            _OP["BINPERSID"]: lambda: push(self._persistent_load(self._stack.pop())),
            _OP["BINGET"]: lambda: push(self._memo_get(read(1)[0])),
            _OP["LONG_BINGET"]: lambda: push(self._memo_get(_UNPACK_L(read(4))[0])),
            _OP["BINPUT"]: lambda: self._memo.__setitem__(read(1)[0], self._stack[-1]),
            _OP["LONG_BINPUT"]: lambda: self._memo.__setitem__(_UNPACK_L(read(4))[0], self._stack[-1]),
            _OP["MEMOIZE"]: lambda: self._memo.__setitem__(len(self._memo), self._stack[-1]),
            _OP["PROTO"]: self._proto,
            _OP["FRAME"]: lambda: read(8),
            _OP["STOP"]: self._stop,
        }
        for code, (nbytes, kind) in _STRING_OPS.items():
            table[code] = string(nbytes, kind)
        return table

    def _push(self, value) -> None:
        self._stack.append(value)

    def _long4(self) -> None:
        n = _UNPACK_I(self._read(4))[0]
        if n < 0:
            raise bad(f"{self._where}: LONG4 with a negative length")
        self._push(decode_long(self._read(n)))

    def _string(self, nbytes: int, kind: str) -> None:
        read = self._read
        if nbytes == 1:
            n = read(1)[0]
        elif nbytes == 4:
            n = _UNPACK_L(read(4))[0]
        elif nbytes == -4:  # BINSTRING's length is signed
            n = _UNPACK_I(read(4))[0]
        else:
            n = _UNPACK_Q(read(8))[0]
        data = read(n)
        if kind == "py2str":  # a Python 2 str: decoded as the caller asks (torch.load's ``encoding``)
            if self._encoding == "bytes":
                self._push(data)
                return
            try:
                self._push(data.decode(self._encoding, "strict"))
            except (UnicodeDecodeError, LookupError) as exc:
                raise bad(f"{self._where}: cannot decode a Python 2 string: {exc}") from None
        elif kind == "str":
            try:
                self._push(data.decode("utf-8", "surrogatepass"))
            except UnicodeDecodeError:
                raise bad(f"{self._where}: a string is not UTF-8") from None
        else:
            self._push(bytearray(data) if kind == "bytearray" else data)

    def _mark(self) -> None:
        self._metastack.append(self._stack)
        self._stack = []

    def _pop_mark(self) -> list:
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _tuple1(self) -> None:
        self._stack[-1] = (self._stack[-1],)

    def _tuple2(self) -> None:
        stack = self._stack
        stack[-2:] = [(stack[-2], stack[-1])]

    def _tuple3(self) -> None:
        stack = self._stack
        stack[-3:] = [(stack[-3], stack[-2], stack[-1])]

    def _dict_op(self) -> None:
        items = self._pop_mark()
        if len(items) % 2:
            raise bad(f"{self._where}: DICT with an odd number of items")
        self._push({items[i]: items[i + 1] for i in range(0, len(items), 2)})

    def _append(self) -> None:
        value = self._stack.pop()
        self._list(self._stack[-1], "APPEND").append(value)

    def _appends(self) -> None:
        items = self._pop_mark()
        self._list(self._stack[-1], "APPENDS").extend(items)

    def _setitem(self) -> None:
        stack = self._stack
        value, k = stack.pop(), stack.pop()
        self._dict(stack[-1], "SETITEM")[k] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        target = self._dict(self._stack[-1], "SETITEMS")
        if len(items) % 2:
            raise bad(f"{self._where}: SETITEMS with an odd number of items")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _additems(self) -> None:
        items = self._pop_mark()
        target = self._stack[-1]
        if type(target) is not set:
            raise bad(f"{self._where}: ADDITEMS may only fill a set, got {type(target).__name__}")
        target.update(items)

    def _global_op(self) -> None:
        module = self._readline()
        name = self._readline()
        self._push(self._global(module, name))

    def _stack_global(self) -> None:
        stack = self._stack
        name, module = stack.pop(), stack.pop()
        if type(module) is not str or type(name) is not str:
            raise bad(f"{self._where}: STACK_GLOBAL needs two strings")
        self._push(self._global(module, name))

    def _reduce(self) -> None:
        stack = self._stack
        args = stack.pop()
        func = stack[-1]
        if id(func) not in self._callables or not callable(func):
            raise pickle.UnpicklingError(f"{self._where}: weights_only=True refuses to call {func!r}")
        if type(args) is not tuple:
            raise bad(f"{self._where}: REDUCE needs a tuple of arguments")
        stack[-1] = func(*args)

    def _newobj(self) -> None:
        args = self._stack.pop()
        cls = self._stack.pop()
        self._push(self._new(cls, args))

    def _newobj_ex(self) -> None:
        stack = self._stack
        kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
        if kwargs:
            raise bad(f"{self._where}: NEWOBJ_EX with keyword arguments is not supported")
        self._push(self._new(cls, args))

    def _build_op(self) -> None:
        state = self._stack.pop()
        self._build(self._stack[-1], state)

    def _proto(self) -> None:
        if self._read(1)[0] > pickle.HIGHEST_PROTOCOL:
            raise bad(f"{self._where}: unsupported pickle protocol")

    def _stop(self) -> None:
        if not self._stack:
            raise bad(f"{self._where}: STOP on an empty stack")
        self._result = self._stack.pop()

    def _memo_get(self, index: int):
        try:
            return self._memo[index]
        except KeyError:
            raise bad(f"{self._where}: the pickle refers to memo entry {index}, which it never stored") from None

    def _list(self, target, op: str) -> list:
        if type(target) is not list:
            raise bad(f"{self._where}: {op} may only extend a list, got {type(target).__name__}")
        return target

    def _dict(self, target, op: str) -> dict:
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise bad(f"{self._where}: {op} may only fill a dict, got {type(target).__name__}")
        return target

    def _new(self, cls, args):
        if not isinstance(cls, type) or cls not in self._user_types:
            raise pickle.UnpicklingError(
                f"{self._where}: weights_only=True creates new objects only of allowlisted classes, got {cls!r}"
            )
        if type(args) is not tuple:
            raise bad(f"{self._where}: NEWOBJ needs a tuple of arguments")
        return cls.__new__(cls, *args)

    def _build(self, inst, state) -> None:
        kind = type(inst)
        if kind is collections.OrderedDict:  # a state_dict's _metadata attribute
            if not isinstance(state, dict):
                raise bad(f"{self._where}: BUILD of an OrderedDict needs a dict of attributes")
            inst.__dict__.update(state)
            return
        if kind not in self._user_types:
            raise pickle.UnpicklingError(
                f"{self._where}: weights_only=True sets state only on OrderedDict and allowlisted classes, "
                f"got {kind.__module__}.{kind.__qualname__}"
            )
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None and getattr(kind, "__setstate__", None) is not object.__setstate__:
            setstate(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)


class TrustedUnpickler(pickle.Unpickler):
    """``weights_only=False``: PyTorch's names map to opweave, anything else is imported (trusted files only)."""

    def __init__(self, data: bytes, table: dict, persistent_load, encoding: str = "utf-8"):
        super().__init__(io.BytesIO(data), encoding=encoding)
        self._table = table
        self._pl = persistent_load

    def find_class(self, module, name):
        """PyTorch's globals from the load's table; other names imported as pickle does."""
        found = self._table.get((module, name), _MISSING)
        if found is not _MISSING:
            return found
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(f"the file names {module}.{name}, which opweave does not provide")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        """Storages from the archive."""
        return self._pl(pid)


def globals_in(data: bytes) -> list[str]:
    """Every global a pickle names (``module.name``), found without running it."""
    import pickletools

    found, strings = [], []
    try:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name == "GLOBAL":
                module, name = arg.split(" ", 1)
                found.append(f"{module}.{name}")
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(f"{strings[-2]}.{strings[-1]}")
            elif isinstance(arg, str) and "UNICODE" in opcode.name:
                strings.append(arg)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError) as exc:
        raise bad(f"malformed pickle: {exc}") from None
    return list(dict.fromkeys(found))


_MISSING = object()
_OP = {
    name: value[0]
    for name, value in vars(pickle).items()
    if name.isupper() and isinstance(value, bytes) and len(value) == 1
}
_NAMES = {code: name for name, code in _OP.items()}
_STRING_OPS = {
    _OP["SHORT_BINUNICODE"]: (1, "str"),
    _OP["BINUNICODE"]: (4, "str"),
    _OP["BINUNICODE8"]: (8, "str"),
    _OP["SHORT_BINBYTES"]: (1, "bytes"),
    _OP["BINBYTES"]: (4, "bytes"),
    _OP["BINBYTES8"]: (8, "bytes"),
    _OP["SHORT_BINSTRING"]: (1, "py2str"),
    _OP["BINSTRING"]: (-4, "py2str"),
    _OP["BYTEARRAY8"]: (8, "bytearray"),
}

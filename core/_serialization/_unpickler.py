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

    def __init__(self, data: bytes, table: dict, persistent_load, where: str):
        self._file = io.BytesIO(data)
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
        stack: list = []
        metastack: list = []
        memo: dict = {}
        read = self._read
        while True:
            key = self._file.read(1)
            if not key:
                raise bad(f"{self._where}: the pickle ends without STOP (truncated)")
            op = key[0]
            if op in _CONSTANTS:
                stack.append(_CONSTANTS[op])
            elif op == _OP["EMPTY_LIST"]:
                stack.append([])
            elif op == _OP["EMPTY_DICT"]:
                stack.append({})
            elif op == _OP["EMPTY_TUPLE"]:
                stack.append(())
            elif op == _OP["EMPTY_SET"]:
                stack.append(set())
            elif op == _OP["BININT1"]:
                stack.append(read(1)[0])
            elif op == _OP["BININT2"]:
                stack.append(_UNPACK_H(read(2))[0])
            elif op == _OP["BININT"]:
                stack.append(_UNPACK_I(read(4))[0])
            elif op == _OP["LONG1"]:
                stack.append(decode_long(read(read(1)[0])))
            elif op == _OP["LONG4"]:
                n = _UNPACK_I(read(4))[0]
                if n < 0:
                    raise bad(f"{self._where}: LONG4 with a negative length")
                stack.append(decode_long(read(n)))
            elif op == _OP["BINFLOAT"]:
                stack.append(_UNPACK_D(read(8))[0])
            elif op in _STRING_OPS:
                nbytes, kind = _STRING_OPS[op]
                n = read(1)[0] if nbytes == 1 else (_UNPACK_L(read(4))[0] if nbytes == 4 else _UNPACK_Q(read(8))[0])
                data = read(n)
                if kind == "str":
                    try:
                        stack.append(data.decode("utf-8", "surrogatepass"))
                    except UnicodeDecodeError:
                        raise bad(f"{self._where}: a string is not UTF-8") from None
                elif kind == "bytearray":
                    stack.append(bytearray(data))
                else:
                    stack.append(data)
            elif op == _OP["MARK"]:
                metastack.append(stack)
                stack = []
            elif op == _OP["POP"]:
                stack.pop()
            elif op == _OP["POP_MARK"]:
                stack = metastack.pop()
            elif op == _OP["DUP"]:
                stack.append(stack[-1])
            elif op == _OP["TUPLE"]:
                items, stack = stack, metastack.pop()
                stack.append(tuple(items))
            elif op == _OP["TUPLE1"]:
                stack[-1] = (stack[-1],)
            elif op == _OP["TUPLE2"]:
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == _OP["TUPLE3"]:
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == _OP["LIST"]:
                items, stack = stack, metastack.pop()
                stack.append(items)
            elif op == _OP["DICT"]:
                items, stack = stack, metastack.pop()
                stack.append({items[i]: items[i + 1] for i in range(0, len(items) - 1, 2)})
            elif op == _OP["APPEND"]:
                value = stack.pop()
                self._list(stack[-1], "APPEND").append(value)
            elif op == _OP["APPENDS"]:
                items, stack = stack, metastack.pop()
                self._list(stack[-1], "APPENDS").extend(items)
            elif op == _OP["SETITEM"]:
                value, k = stack.pop(), stack.pop()
                self._dict(stack[-1], "SETITEM")[k] = value
            elif op == _OP["SETITEMS"]:
                items, stack = stack, metastack.pop()
                target = self._dict(stack[-1], "SETITEMS")
                if len(items) % 2:
                    raise bad(f"{self._where}: SETITEMS with an odd number of items")
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == _OP["ADDITEMS"]:
                items, stack = stack, metastack.pop()
                if type(stack[-1]) is not set:
                    raise bad(f"{self._where}: ADDITEMS may only fill a set, got {type(stack[-1]).__name__}")
                stack[-1].update(items)
            elif op == _OP["FROZENSET"]:
                items, stack = stack, metastack.pop()
                stack.append(frozenset(items))
            elif op == _OP["GLOBAL"]:
                module = self._readline()
                name = self._readline()
                stack.append(self._global(module, name))
            elif op == _OP["STACK_GLOBAL"]:
                name, module = stack.pop(), stack.pop()
                if type(module) is not str or type(name) is not str:
                    raise bad(f"{self._where}: STACK_GLOBAL needs two strings")
                stack.append(self._global(module, name))
            elif op == _OP["REDUCE"]:
                args = stack.pop()
                func = stack[-1]
                if id(func) not in self._callables or not callable(func):
                    raise pickle.UnpicklingError(f"{self._where}: weights_only=True refuses to call {func!r}")
                if type(args) is not tuple:
                    raise bad(f"{self._where}: REDUCE needs a tuple of arguments")
                stack[-1] = func(*args)
            elif op == _OP["NEWOBJ"]:
                args = stack.pop()
                cls = stack.pop()
                stack.append(self._new(cls, args))
            elif op == _OP["NEWOBJ_EX"]:
                kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
                if kwargs:
                    raise bad(f"{self._where}: NEWOBJ_EX with keyword arguments is not supported")
                stack.append(self._new(cls, args))
            elif op == _OP["BUILD"]:
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == _OP["BINPERSID"]:
                pid = stack.pop()
                stack.append(self._persistent_load(pid))
            elif op == _OP["BINGET"]:
                stack.append(self._memo_get(memo, read(1)[0]))
            elif op == _OP["LONG_BINGET"]:
                stack.append(self._memo_get(memo, _UNPACK_L(read(4))[0]))
            elif op == _OP["BINPUT"]:
                memo[read(1)[0]] = stack[-1]
            elif op == _OP["LONG_BINPUT"]:
                memo[_UNPACK_L(read(4))[0]] = stack[-1]
            elif op == _OP["MEMOIZE"]:
                memo[len(memo)] = stack[-1]
            elif op == _OP["PROTO"]:
                if read(1)[0] > pickle.HIGHEST_PROTOCOL:
                    raise bad(f"{self._where}: unsupported pickle protocol")
            elif op == _OP["FRAME"]:
                read(8)
            elif op == _OP["STOP"]:
                if not stack:
                    raise bad(f"{self._where}: STOP on an empty stack")
                return stack.pop()
            else:
                name = _NAMES.get(op, f"0x{op:02x}")
                raise bad(f"{self._where}: weights_only=True does not support the pickle opcode {name}")

    def _memo_get(self, memo: dict, index: int):
        try:
            return memo[index]
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

    def __init__(self, data: bytes, table: dict, persistent_load):
        super().__init__(io.BytesIO(data))
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
_CONSTANTS = {_OP["NONE"]: None, _OP["NEWTRUE"]: True, _OP["NEWFALSE"]: False}
_STRING_OPS = {
    _OP["SHORT_BINUNICODE"]: (1, "str"),
    _OP["BINUNICODE"]: (4, "str"),
    _OP["BINUNICODE8"]: (8, "str"),
    _OP["SHORT_BINBYTES"]: (1, "bytes"),
    _OP["BINBYTES"]: (4, "bytes"),
    _OP["BINBYTES8"]: (8, "bytes"),
    _OP["SHORT_BINSTRING"]: (1, "str"),  # Python 2 str, decoded as UTF-8 (as torch.load does)
    _OP["BYTEARRAY8"]: (8, "bytearray"),
}

"""Frozen values as plain JSON data and back, checked against their types: a cache's format that can hold no code.

``encode(value, kind)`` turns a value of *kind* (a dataclass, usually frozen) into lists, strings and numbers that
``json.dumps`` writes; ``decode(data, kind)`` makes the value again, guided by the type hints of each dataclass's
fields, and checks every value on the way: data that is not what the types say (tampered, truncated, of another
version) raises ``DecodeError``, never anything else, and nothing in it names a class or a function to call.

The types a field may have: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Fraction``, an ``Enum`` (by member
name), a dataclass whose fields are all ``__init__``'s (made through it, so ``__post_init__`` runs), ``X | None``
and other unions, ``tuple[X, ...]`` and ``tuple[X, Y]``, and ``Mapping[K, V]`` (made a read-only dict).

Each dataclass instance is written once, in a table, and referred to by its index there: an instance that a value
holds in several places (a Stand unchanged from one cue to the next) is one instance again when decoded, as it was
when encoded, and is written once.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, TypeVar

from yuesheng.errors import DecodeError

T = TypeVar("T")
Encoder = Callable[[Any, "_Encoding"], Any]
Decoder = Callable[[Any, "_Decoding"], Any]


def encode(value: Any, kind: type[Any]) -> dict[str, Any]:
    """*value*, of type *kind*, as plain data for JSON; TypeError if it is not of that type."""
    encoding = _Encoding()
    root = _codec(kind)[0](value, encoding)
    return {"root": root, "objects": encoding.objects}


def decode(data: Any, kind: type[T]) -> T:
    """The value of type *kind* that *data* (from ``encode``, read back from JSON) holds; DecodeError if it holds
    anything else."""
    if not (isinstance(data, dict) and data.keys() == {"root", "objects"} and isinstance(data["objects"], list)):
        raise DecodeError("not encoded data")
    try:
        value: T = _codec(kind)[1](data["root"], _Decoding(data["objects"]))
    except RecursionError:
        raise DecodeError("nested too deeply") from None
    except (TypeError, ValueError, ArithmeticError) as exc:  # a class's own __init__ or __post_init__ refusing a value
        raise DecodeError(str(exc)) from None
    return value


class _Encoding:
    """The table of dataclass instances written so far (each once, by identity)."""

    def __init__(self) -> None:
        self.objects: list[Any] = []
        self.index: dict[int, int] = {}
        self.alive: list[Any] = []  # the instances indexed, so that no id is reused while encoding


class _Decoding:
    """The table read, and the instances made of it so far (by index)."""

    def __init__(self, objects: list[Any]) -> None:
        self.objects = objects
        self.made: dict[int, Any] = {}


_MAKING = object()  # an instance being made: a reference to it from within is a cycle


def _codec(kind: Any) -> tuple[Encoder, Decoder]:
    """The encoder and decoder of values of type *kind* (made once a process); TypeError for a type this module does
    not know."""
    if (known := _CODECS.get(kind)) is None:
        known = _CODECS[kind] = _make_codec(kind)
    return known


_CODECS: dict[Any, tuple[Encoder, Decoder]] = {}


def _make_codec(kind: Any) -> tuple[Encoder, Decoder]:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind in (str, int, float, bool) or kind is type(None) or kind is None:
        return _plain(type(None) if kind is None else kind)
    if kind is Fraction:
        return _encode_fraction, _decode_fraction
    if isinstance(kind, type) and issubclass(kind, Enum):
        return _enum(kind)
    if isinstance(kind, type) and is_dataclass(kind):
        return _dataclass(kind)
    if origin in (types.UnionType, typing.Union):
        return _union(args)
    if origin is tuple:
        return _tuple(args)
    if origin is Mapping:
        return _mapping(*args)
    raise TypeError(f"datacodec: no codec for {kind!r}")


def _fail(what: str, value: Any) -> DecodeError:
    return DecodeError(f"expected {what}, not {type(value).__name__}")


def _plain(kind: type) -> tuple[Encoder, Decoder]:
    """str, int, float (an int too, kept an int), bool, None: as themselves; a bool is never an int here."""
    accepted = (int, float) if kind is float else (kind,)

    def check(value: Any) -> Any:
        if not isinstance(value, accepted) or (isinstance(value, bool) and kind is not bool):
            raise TypeError(f"expected {kind.__name__}, not {type(value).__name__}")
        return value

    def read(data: Any, _: _Decoding) -> Any:
        if not isinstance(data, accepted) or (isinstance(data, bool) and kind is not bool):
            raise _fail(kind.__name__, data)
        return data

    return lambda value, _: check(value), read


def _encode_fraction(value: Any, _: _Encoding) -> list[int]:
    if type(value) is not Fraction:
        raise TypeError(f"expected Fraction, not {type(value).__name__}")
    return [value.numerator, value.denominator]


def _decode_fraction(data: Any, _: _Decoding) -> Fraction:
    if not (isinstance(data, list) and len(data) == 2 and all(type(n) is int for n in data) and data[1] > 0):
        raise _fail("a fraction [numerator, denominator]", data)
    return Fraction(data[0], data[1])


def _enum(kind: type[Enum]) -> tuple[Encoder, Decoder]:
    def write(value: Any, _: _Encoding) -> str:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, not {type(value).__name__}")
        return value.name

    def read(data: Any, _: _Decoding) -> Enum:
        if not isinstance(data, str) or data not in kind.__members__:
            raise _fail(f"a member of {kind.__name__}", data)
        return kind[data]

    return write, read


def _dataclass(kind: type[Any]) -> tuple[Encoder, Decoder]:
    """A dataclass instance as the index of its fields' values in the table; made again through ``__init__``."""
    every = fields(kind)
    if not all(f.init for f in every):
        raise TypeError(f"datacodec: {kind.__name__} has a field its __init__ does not take")
    hints = typing.get_type_hints(kind)
    names = [f.name for f in every]
    codecs = [_LazyCodec(hints[name]) for name in names]

    def write(value: Any, encoding: _Encoding) -> int:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, not {type(value).__name__}")
        if (found := encoding.index.get(id(value))) is not None:
            return found
        row = [codec.encode(getattr(value, name), encoding) for name, codec in zip(names, codecs, strict=True)]
        encoding.objects.append(row)
        encoding.alive.append(value)
        encoding.index[id(value)] = len(encoding.objects) - 1
        return len(encoding.objects) - 1

    def read(data: Any, decoding: _Decoding) -> Any:
        if type(data) is not int or not 0 <= data < len(decoding.objects):
            raise _fail(f"the index of a {kind.__name__}", data)
        if (made := decoding.made.get(data)) is not None:  # most references are to an instance made before
            if type(made) is not kind:
                raise DecodeError(f"object {data} is not a {kind.__name__}")
            return made
        row = decoding.objects[data]
        if not isinstance(row, list) or len(row) != len(names):
            raise _fail(f"the {len(names)} fields of a {kind.__name__}", row)
        decoding.made[data] = _MAKING
        try:
            values = {name: codec.decode(item, decoding) for name, codec, item in zip(names, codecs, row, strict=True)}
            made = decoding.made[data] = kind(**values)
        finally:
            if decoding.made.get(data) is _MAKING:
                del decoding.made[data]
        return made

    return write, read


class _LazyCodec:
    """A field's codec, found when first used: a dataclass may name itself, or one defined after it, in its fields."""

    def __init__(self, kind: Any) -> None:
        self.kind = kind
        self.encode: Encoder = self._first_encode
        self.decode: Decoder = self._first_decode

    def _resolve(self) -> None:
        self.encode, self.decode = _codec(self.kind)

    def _first_encode(self, value: Any, encoding: _Encoding) -> Any:
        self._resolve()
        return self.encode(value, encoding)

    def _first_decode(self, data: Any, decoding: _Decoding) -> Any:
        self._resolve()
        return self.decode(data, decoding)


def _union(kinds: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
    """A union as its first member that takes the value; data as the first member that it decodes as. (A member
    that is a dataclass is written as an int: such a union may hold one dataclass and no int.)"""
    codecs = [_codec(k) for k in kinds]

    def write(value: Any, encoding: _Encoding) -> Any:
        for encoder, _ in codecs:
            try:
                return encoder(value, encoding)
            except TypeError:
                continue
        raise TypeError(f"expected one of {kinds!r}, not {type(value).__name__}")

    def read(data: Any, decoding: _Decoding) -> Any:
        for _, decoder in codecs:
            try:
                return decoder(data, decoding)
            except DecodeError:
                continue
        raise _fail(" or ".join(map(repr, kinds)), data)

    return write, read


def _tuple(args: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
    """``tuple[X, ...]`` (any length) or ``tuple[X, Y]`` (that length) as a list."""
    if len(args) == 2 and args[1] is Ellipsis:
        item = _LazyCodec(args[0])

        def write_all(value: Any, encoding: _Encoding) -> list[Any]:
            if type(value) is not tuple:
                raise TypeError(f"expected a tuple, not {type(value).__name__}")
            return [item.encode(v, encoding) for v in value]

        def read_all(data: Any, decoding: _Decoding) -> tuple[Any, ...]:
            if not isinstance(data, list):
                raise _fail("a list", data)
            return tuple([item.decode(d, decoding) for d in data])

        return write_all, read_all
    items = [_LazyCodec(a) for a in args]

    def write(value: Any, encoding: _Encoding) -> list[Any]:
        if type(value) is not tuple or len(value) != len(items):
            raise TypeError(f"expected a tuple of {len(items)}, not {value!r}")
        return [codec.encode(v, encoding) for codec, v in zip(items, value, strict=True)]

    def read(data: Any, decoding: _Decoding) -> tuple[Any, ...]:
        if not isinstance(data, list) or len(data) != len(items):
            raise _fail(f"a list of {len(items)}", data)
        return tuple([codec.decode(d, decoding) for codec, d in zip(items, data, strict=True)])

    return write, read


def _mapping(key_kind: Any, value_kind: Any) -> tuple[Encoder, Decoder]:
    """A mapping as a list of [key, value] pairs, in its order (a key need not be a string); read back as a read-only
    dict. A key given twice is an error."""
    key, item = _LazyCodec(key_kind), _LazyCodec(value_kind)

    def write(value: Any, encoding: _Encoding) -> list[list[Any]]:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping, not {type(value).__name__}")
        return [[key.encode(k, encoding), item.encode(v, encoding)] for k, v in value.items()]

    def read(data: Any, decoding: _Decoding) -> Mapping[Any, Any]:
        if not isinstance(data, list):
            raise _fail("a list of [key, value] pairs", data)
        made = {}
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise _fail("a [key, value] pair", pair)
            made[key.decode(pair[0], decoding)] = item.decode(pair[1], decoding)
        if len(made) != len(data):
            raise DecodeError("a key given twice")
        return types.MappingProxyType(made)

    return write, read

"""Results as plain data: what a verify child writes and the verifier reads, never a pickle.

``dumps`` turns a result (dicts, lists, tuples, strings, numbers, None, numpy arrays and
scalars) into JSON followed by the arrays in ``.npy`` form; ``loads`` reads it back with
``json.loads`` and ``numpy.load(allow_pickle=False)``: nothing in the bytes can make the reader
run code, whatever the side wrote. Every JSON object is a tag (``{"$t": [...]}`` a tuple,
``{"$d": [[k, v], ...]}`` a dict, ``{"$a": [offset, size]}`` an array, ...), so a tuple stays a
tuple and a dict may have keys of any encodable type. An object-dtype array is its shape and its
encoded elements; any other object (a ``Fraction``) is the text of its ``repr``. A result
that does not decode raises ``ValueError``.

Imported by children before JAX: numpy is imported only when arrays are written or read.
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any, List

_LENGTH = struct.Struct("<Q")


def _encode(value: Any, blobs: List[bytes], at: List[int]) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return {"$c": [value.real, value.imag]}
    if isinstance(value, list):
        return [_encode(v, blobs, at) for v in value]
    if isinstance(value, tuple):
        return {"$t": [_encode(v, blobs, at) for v in value]}
    if isinstance(value, dict):
        return {"$d": [[_encode(k, blobs, at), _encode(v, blobs, at)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$b": value.hex()}
    module = type(value).__module__.partition(".")[0]
    if module == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray) and value.dtype == object:
            return {"$o": list(value.shape), "items": [_encode(v, blobs, at) for v in value.flat]}
        if isinstance(value, (np.ndarray, np.generic)):
            buffer = io.BytesIO()
            np.save(buffer, np.asarray(value), allow_pickle=False)
            blobs.append(buffer.getvalue())
            at[0] += len(blobs[-1])
            return {"$a" if isinstance(value, np.ndarray) else "$s": [at[0] - len(blobs[-1]), len(blobs[-1])]}
    return {"$r": repr(value)}


def dumps(result: Any) -> bytes:
    """``result`` as bytes: the JSON's length, the JSON, then the arrays' ``.npy`` bytes."""
    blobs: List[bytes] = []
    text = json.dumps(_encode(result, blobs, [0]), separators=(",", ":")).encode()
    return _LENGTH.pack(len(text)) + text + b"".join(blobs)


def _decode(value: Any, blobs: memoryview) -> Any:
    if isinstance(value, list):
        return [_decode(v, blobs) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, body), = value.items()
        if tag == "$t":
            return tuple(_decode(v, blobs) for v in body)
        if tag == "$d":
            return {_decode(k, blobs): _decode(v, blobs) for k, v in body}
        if tag == "$c":
            return complex(*body)
        if tag == "$b":
            return bytes.fromhex(body)
        if tag == "$r":
            return str(body)
        if tag in ("$a", "$s"):
            import numpy as np

            start, size = (int(n) for n in body)
            if start < 0 or size < 0 or start + size > len(blobs):
                raise ValueError("an array outside the result")
            array = np.load(io.BytesIO(blobs[start:start + size]), allow_pickle=False)
            return array if tag == "$a" else array[()]
    if set(value) == {"$o", "items"}:
        import numpy as np

        items = [_decode(v, blobs) for v in value["items"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(tuple(int(n) for n in value["$o"]))
    raise ValueError(f"not a result: a JSON object with keys {sorted(value)[:4]}")


def loads(data: bytes) -> Any:
    """The result ``dumps`` wrote (``ValueError`` if ``data`` is not one)."""
    try:
        (size,) = _LENGTH.unpack_from(data, 0)
        text = data[_LENGTH.size:_LENGTH.size + size]
        if len(text) != size:
            raise ValueError("cut short")
        return _decode(json.loads(text), memoryview(data)[_LENGTH.size + size:])
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - anything else malformed (deep nesting, a wrong type)
        raise ValueError(f"{type(exc).__name__}: {exc}") from None

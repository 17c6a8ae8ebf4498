"""The JSON helpers of the model files (``docs/model-format.md``), shared by every kind.

Writing: :func:`encode_float` / :func:`encode_floats` store a float so that it reads back
with the same bits (finite values as JSON numbers, the float64 shortest repr; non-finite
ones as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``), :func:`encode_values`
stores a 1-D array of labels or categories with its dtype.

Reading: :class:`Node` wraps a parsed JSON value with its path in the document
(``model.rules[3].head.scores``); its typed accessors raise ``ValueError`` naming the path
and what was expected, so a malformed file never fails deeper inside NumPy.
"""

import math

import numpy as np

MALFORMED = "malformed gpurules model file"
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def encode_float(value):
    """A float as a JSON value that :meth:`Node.float` reads back bit for bit (a float32
    widens exactly to float64, so ``np.float32`` of the value read is the same float32)."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def encode_floats(values):
    """A list of :func:`encode_float` values of a float array (any shape is flattened)."""
    return [encode_float(v) for v in np.asarray(values).ravel().tolist()]


def encode_values(values, what):
    """``{"dtype": str, "values": list}`` of a 1-D array of labels or categories.

    Booleans, integers, floats (:func:`encode_float`) and unicode strings are stored with
    the array's dtype; an object array may hold str, int, finite float or bool scalars.
    Anything else raises ``ValueError`` naming ``what``.
    """
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind in "biu":
        items = [v if isinstance(v, bool) else int(v) for v in values.tolist()]
    elif kind == "f":
        items = encode_floats(values)
    elif kind == "U":
        items = [str(v) for v in values.tolist()]
    elif kind == "O":
        items = [_plain_scalar(v, what) for v in values.tolist()]
    else:
        raise ValueError(f"{what} of dtype {values.dtype} cannot be stored in a model file "
                         f"(bool, int, float, str or objects of those only)")
    return {"dtype": values.dtype.str if kind != "O" else "object", "values": items}


def _plain_scalar(value, what):
    """A str, int, finite float or bool as itself (NumPy scalars as Python ones)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ValueError(f"{what} holds {value!r} ({type(value).__name__}), which cannot be "
                     f"stored in a model file (str, int, finite float or bool only)")


class Node:
    """A parsed JSON value and its path in the document, with typed accessors."""

    def __init__(self, value, path):
        self.value = value
        self.path = path

    def fail(self, expected):
        """ValueError: this node is not ``expected``."""
        shown = repr(self.value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise ValueError(f"{MALFORMED}: {self.path} must be {expected}, got {shown}")

    def _object(self):
        if not isinstance(self.value, dict):
            self.fail("an object")
        return self.value

    def get(self, key):
        """The member ``key`` (ValueError if this is no object or ``key`` is missing)."""
        obj = self._object()
        if key not in obj:
            raise ValueError(f"{MALFORMED}: {self._child(key)} is missing")
        return Node(obj[key], self._child(key))

    def optional(self, key):
        """The member ``key``, or None where it is missing or null."""
        obj = self._object()
        return None if obj.get(key) is None else Node(obj[key], self._child(key))

    def items(self):
        """(key, Node) of an object's members."""
        return [(k, Node(v, self._child(k))) for k, v in self._object().items()]

    def _child(self, key):
        return f"{self.path}.{key}" if self.path else key

    def list(self, length=None):
        """The elements of a JSON array as Nodes (of ``length`` elements if given)."""
        if not isinstance(self.value, list):
            self.fail("an array")
        if length is not None and len(self.value) != length:
            self.fail(f"an array of {length} elements")
        return [Node(v, f"{self.path}[{i}]") for i, v in enumerate(self.value)]

    def int(self, low=None, high=None):
        """An integer in ``[low, high)`` (either bound optional)."""
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int) or \
                (low is not None and v < low) or (high is not None and v >= high):
            self.fail("an integer" + (f" >= {low}" if low is not None else "") +
                      (f" < {high}" if high is not None else ""))
        return v

    def bool(self):
        if not isinstance(self.value, bool):
            self.fail("true or false")
        return self.value

    def str(self, choices=None):
        """A string (one of ``choices`` if given)."""
        if not isinstance(self.value, str) or (choices is not None and self.value not in choices):
            self.fail("a string" if choices is None else
                      "one of " + ", ".join(repr(c) for c in choices))
        return self.value

    def float(self):
        """A float written by :func:`encode_float` (an integer is accepted too)."""
        v = self.value
        if isinstance(v, str) and v in _NON_FINITE:
            return _NON_FINITE[v]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail('a number or "NaN", "Infinity", "-Infinity"')
        return float(v)

    def floats(self, dtype=np.float64, length=None):
        """A 1-D ``dtype`` array of :meth:`float` elements."""
        return np.array([n.float() for n in self.list(length)], dtype=np.float64).astype(dtype)

    def ints(self, dtype=np.int64, low=None, high=None, length=None):
        """A 1-D ``dtype`` array of :meth:`int` elements in ``[low, high)``."""
        values = [n.int(low, high) for n in self.list(length)]
        try:
            return np.array(values, dtype=dtype)
        except OverflowError:
            return self.fail(f"an array of integers that fit {np.dtype(dtype).name}")

    def strings(self, length=None):
        """A list of strings."""
        return [n.str() for n in self.list(length)]

    def values(self):
        """The 1-D array written by :func:`encode_values`."""
        dtype_text = self.get("dtype").str()
        items = self.get("values").list()
        if dtype_text == "object":
            out = np.empty(len(items), dtype=object)
            for i, n in enumerate(items):
                if not isinstance(n.value, (str, bool, int, float)):
                    n.fail("a string, number or boolean")
                out[i] = n.value
            return out
        try:
            dtype = np.dtype(dtype_text)
        except TypeError:
            self.get("dtype").fail("a NumPy dtype string such as '<i8' or '<U5'")
        if dtype.kind == "f":
            return np.array([n.float() for n in items], dtype=dtype)
        if dtype.kind == "b":
            return np.array([n.bool() for n in items], dtype=dtype)
        if dtype.kind in "iu":
            return np.array([n.int() for n in items], dtype=dtype)
        if dtype.kind == "U":
            return np.array([n.str() for n in items], dtype=dtype)
        return self.get("dtype").fail("a bool, int, float, unicode or 'object' dtype")

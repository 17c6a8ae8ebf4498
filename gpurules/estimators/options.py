"""Parsing of mlrl-style parameter values such as ``"without-replacement{sample_size=0.5}"``.

A value is a name optionally followed by ``{key=value,...}``. Each parameter declares
its supported names and, per name, the options with their defaults; anything else raises
a ``ValueError`` that lists what is supported.
"""

import math
import numbers
import re

import numpy as np

_VALUE_RE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\{(.*)\})?\s*$", re.DOTALL)


def _convert(param, name, key, raw, default):
    raw = raw.strip()
    try:
        if isinstance(default, bool):
            if raw.lower() not in ("true", "false"):
                raise ValueError
            return raw.lower() == "true"
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise ValueError(f"{param}={name!r}: option {key}={raw!r} must be of type "
                         f"{type(default).__name__}") from None
    return raw


def parse_option_value(param, value, supported):
    """Parse ``value`` of parameter ``param``.

    Args:
        param: the parameter's name (for messages).
        value: str (or None, meaning the first supported name).
        supported: dict mapping each supported name to a dict ``{option: default}``.

    Returns:
        (name, options): options holds every declared option, defaults filled in.
    """
    if value is None:
        value = next(iter(supported))
    if not isinstance(value, str):
        raise TypeError(f"{param} must be a str, got {type(value).__name__}")
    m = _VALUE_RE.match(value)
    names = ", ".join(repr(n) for n in supported)
    if m is None or m.group(1).lower() not in supported:
        raise ValueError(f"{param}={value!r} is not supported; supported values: {names}")
    name = m.group(1).lower()
    defaults = supported[name]
    options = dict(defaults)
    body = m.group(2)
    if body is not None and body.strip():
        for item in body.split(","):
            if "=" not in item:
                raise ValueError(f"{param}={value!r}: option {item.strip()!r} is not of the form "
                                 f"key=value")
            key, raw = (s.strip() for s in item.split("=", 1))
            if key not in defaults:
                allowed = ", ".join(defaults) or "none"
                raise ValueError(f"{param}={value!r}: unknown option {key!r}; options of "
                                 f"{name!r}: {allowed}")
            options[key] = _convert(param, name, key, raw, defaults[key])
    return name, options


def check_number(param, value, low=None, high=None, low_open=False, integer=False):
    """Validate a finite numeric parameter; returns it as float (or int)."""
    kind = "an int" if integer else "a number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{param} must be {kind}, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{param} must be a finite number, got {value!r}")
    if integer and not float(value).is_integer():
        raise TypeError(f"{param} must be {kind}, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{param} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{param} must be <= {high}, got {value!r}")
    return int(value) if integer else float(value)

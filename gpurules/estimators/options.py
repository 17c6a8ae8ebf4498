"""Parsing of mlrl-style parameter values such as ``"without-replacement{sample_size=0.5}"``.

A value is a name optionally followed by ``{key=value,...}``. Each parameter declares
its supported names and, per name, the options with their defaults; anything else raises
a ``ValueError`` that lists what is supported.
"""

import math
import numbers
import re

import numpy as np

# the largest max_rules accepted: a 32-bit count (more rules than any fit can learn)
MAX_RULES_LIMIT = 2 ** 31 - 1

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
    given = set()
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
            if key in given:
                raise ValueError(f"{param}={value!r}: option {key!r} is given twice")
            given.add(key)
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


def check_sample_counts(param, name, opts, minimum_key="min_samples",
                        maximum_key="max_samples"):
    """mlrl-boomer's checks of a sampling's (or head's) bounds in ``opts``: the minimum
    ``>= 1``, the maximum 0 (no limit) or ``>=`` the minimum. Returns (minimum, maximum),
    ints."""
    minimum = check_number(f"{param} {minimum_key}", opts[minimum_key], low=1, integer=True)
    maximum = check_number(f"{param} {maximum_key}", opts[maximum_key], low=0, integer=True)
    if 0 < maximum < minimum:
        raise ValueError(f"{param}={name!r}: {maximum_key}={maximum} must be 0 (no limit) or "
                         f">= {minimum_key}={minimum}")
    return minimum, maximum


def check_feature_sampling(name, opts):
    """``feature_sampling``'s options as mlrl-boomer checks them (:func:`check_sample_counts`),
    and ``num_retained`` 0: mlrl-boomer's trailing features kept in every sample are not
    implemented, and a value would otherwise be ignored."""
    if not opts:  # none
        return
    check_sample_counts("feature_sampling", name, opts)
    if opts["num_retained"] != 0:
        raise ValueError(f"feature_sampling={name!r}: num_retained={opts['num_retained']!r} "
                         f"is not supported (features kept in every sample); only 0")

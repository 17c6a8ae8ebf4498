"""``--learner`` and ``--param name=value``: which estimator, with which parameters.

Values are the estimators' own: the mlrl-style strings of BOOMER's and SeCo's string
parameters (``head_type=partial-dynamic{threshold=0.02}``) are passed on unchanged; any
other value that reads as a number becomes an int or a float, ``none`` becomes None and
a comma-separated list of numbers a list (TURS's ``categorical_features=0,3``). The
estimators check the values when they fit and raise the errors the CLI prints.
"""

from __future__ import annotations

from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.seco import SeCoClassifier
from gpurules.estimators.turs import TursClassifier

LEARNERS = {"boomer": BoomerClassifier, "seco": SeCoClassifier, "turs": TursClassifier}


def parse_params(learner: str, items: list[str]) -> dict:
    """``{name: value}`` of the ``--param`` items for ``learner`` (a key of ``LEARNERS``).

    Raises:
        ValueError: an item without ``=``, or a name that is no parameter of the learner
            (the message lists the valid ones).
    """
    cls = LEARNERS[learner]
    defaults = cls().get_params(deep=False)
    params = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"--param {item!r}: expected name=value")
        if name not in defaults:
            raise ValueError(f"unknown parameter {name!r} of {cls.__name__} (--learner "
                             f"{learner}); valid: {', '.join(sorted(defaults))}")
        params[name] = convert_value(cls, name, raw.strip(), defaults[name])
    return params


def convert_value(cls, name: str, raw: str, default):
    """The Python value of ``--param name=raw`` (see the module docstring)."""
    if name in getattr(cls, "_SUPPORTED", {}) or isinstance(default, str):
        return raw
    if raw.lower() == "none":
        return None
    number = _number(raw)
    if number is not None:
        return number
    if "," in raw:
        numbers = [_number(part.strip()) for part in raw.split(",") if part.strip()]
        if numbers and None not in numbers:
            return numbers
    return raw


def _number(text: str):
    """``text`` as an int or a float, or None."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None


def make_estimator(learner: str, params: dict, verbose: int, nominal_features: list[int]):
    """The estimator with ``params``; ``verbose`` unless given as a parameter, and for
    TURS the file's nominal columns as ``categorical_features`` unless given."""
    params = dict(params)
    params.setdefault("verbose", verbose)
    if learner == "turs" and nominal_features:
        params.setdefault("categorical_features", list(nominal_features))
    return LEARNERS[learner](**params)

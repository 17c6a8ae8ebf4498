"""The conditions of the models' rules: the operators of a BOOMER or SeCo condition
(``OP_*``, their text ``OP_SYMBOLS``, and ``satisfies``, the one definition of when a value
satisfies one), the kinds of a TURS literal (``KIND_*``) and how a name shows in a rule's
text (``name_text``).

The lowest module of the model layer: the model classes, their prediction kernels, the
model files and the backends' searches all import it, and it imports no other module of
``gpurules``.
"""

import numba as nb

OP_LEQ = 0  # x <= t
OP_GR = 1  # x > t
OP_EQ = 2  # x == t (nominal)
OP_NEQ = 3  # x != t (nominal)

OP_SYMBOLS = {OP_LEQ: "<=", OP_GR: ">", OP_EQ: "==", OP_NEQ: "!="}

# a TURS literal (``model_turs.TursRule``): a numeric interval, or a nominal == / !=
KIND_NUMERIC, KIND_EQ, KIND_NE = 0, 1, 2


def name_text(name):
    """A feature's, label's or level's name as the models' text shows it: as it is, unless
    it is empty or holds a character that does not print (a newline, a tab, ...), which
    would break the text's one rule per line; such a name is shown as its ``repr``.

    Args:
        name: str (a column name, an ARFF attribute or level).
    Returns:
        str.
    """
    name = str(name)
    return name if name and name.isprintable() else repr(name)


@nb.njit(inline="always")
def satisfies(op, value, threshold):
    """Whether ``value`` satisfies a condition; NaN (missing) never does. The one
    definition of a condition: inlined by the CPU kernels, compiled for the GPU by
    ``backends/cuda/device_math.py``."""
    if value != value:
        return False
    if op == OP_LEQ:
        return value <= threshold
    if op == OP_GR:
        return value > threshold
    if op == OP_EQ:
        return value == threshold
    return value != threshold

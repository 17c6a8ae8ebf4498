"""matplotlib, imported on first use with an error naming the extra, and the new-or-given
``Axes`` every plotting function starts from."""


def pyplot():
    """``matplotlib.pyplot``; ImportError naming the ``plot`` extra when it is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("gpurules.plot needs matplotlib, an optional dependency: "
                          "pip install 'gpurules[plot]'") from None
    return plt


def axes(ax, figsize):
    """``ax`` if given, else the ``Axes`` of a new figure of ``figsize`` (inches)."""
    if ax is not None:
        return ax
    _, ax = pyplot().subplots(figsize=figsize)
    return ax

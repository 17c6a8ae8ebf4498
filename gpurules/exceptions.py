"""Warnings that gpurules' estimators issue (import them to filter or to test for them), and
:func:`warn`, which issues one at the user's line."""

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class FitStoppedEarlyWarning(UserWarning):
    """A fit ended before ``max_rules`` because no further rule could be learned (every
    refinement of the sampled features fails ``min_coverage`` or does not improve the
    objective), or an unlimited fit reached its safety ceiling. The message says which."""


def warn(message, category):
    """``warnings.warn(message, category)`` attributed to the first calling frame outside
    the gpurules package (the user's ``fit`` line, as Python 3.12's
    ``skip_file_prefixes``), whatever the depth of the call inside the package."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)

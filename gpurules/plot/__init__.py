"""Pictures of fitted models and benchmark results (matplotlib, an optional extra:
``pip install 'gpurules[plot]'``).

Models (:mod:`gpurules.plot.models`), for a fitted ``BoomerClassifier``, ``SeCoClassifier``
or ``TursClassifier`` (or its ``model_``):

- :func:`plot_rules`: a heat map of rules x outputs (BOOMER head scores, SeCo predicted
  values, TURS class probabilities) with each rule's training coverage beside it;
- :func:`plot_feature_importances`: ``feature_importances_`` as bars, named;
- :func:`plot_explanation`: the rules that fire for one example and what each contributes
  per output, with the prediction in the last row.

Benchmarks (:mod:`gpurules.plot.tables`), from the Markdown or CSV tables the scripts in
``benchmarks/`` write:

- :func:`read_table`: the rows of such a table as dicts of strings;
- :func:`plot_fit_time`: fit time against the number of training examples, log-log, one
  line per system;
- :func:`plot_quality`: a quality column as grouped bars, data sets x systems.

Every function takes an optional ``ax`` (a new figure otherwise) and returns the ``Axes``.
Importing :mod:`gpurules` never imports this package or matplotlib.
"""

from gpurules.plot.models import plot_explanation, plot_feature_importances, plot_rules
from gpurules.plot.tables import plot_fit_time, plot_quality, read_table

__all__ = ["plot_rules", "plot_feature_importances", "plot_explanation", "read_table",
           "plot_fit_time", "plot_quality"]

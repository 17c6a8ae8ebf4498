"""Saving a fitted estimator: its model file plus an ``estimator`` section.

An estimator predicts with more than its ``model_``: the label classes and output shape
(BOOMER, SeCo), BOOMER's loss and predictors, the fitted column names and categories that
``predict`` checks X against, the thread counts. ``estimator.save(path)`` writes the
model's document (``gpurules.model_io``) with an ``estimator`` section holding the
constructor parameters and those fitted attributes; :func:`load_estimator` rebuilds a
fitted estimator from it that predicts bit for bit as the saved one
(``docs/model-format.md``). ``gpurules.load_model`` reads the same file and ignores the
section.
"""

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from gpurules.json_fields import MALFORMED, Node, encode_values
from gpurules.model_io import (check_document, model_from_dict, model_to_dict, read_document,
                               write_document)

# model kind -> the estimator classes whose models are of that kind (a document's
# ``estimator.class``), the first the default
_CLASSES = {"boomer": ("BoomerClassifier", "BoomerRegressor"), "seco": ("SeCoClassifier",),
            "turs": ("TursClassifier",)}


_NAMES = {name for names in _CLASSES.values() for name in names}
# class name -> estimator class, filled as the classes are defined (``register_estimator``):
# this module needs the classes to rebuild an estimator, and they need this module to save
# themselves, so they register instead of being imported here
_REGISTERED = {}


def register_estimator(cls):
    """Make ``cls`` loadable by its name if it is one of this package's estimator classes
    named in ``_CLASSES`` (``estimators._base.RuleEstimatorMixin`` calls this for each of its
    subclasses as the subclass is defined; ``import gpurules`` defines all four)."""
    if cls.__name__ in _NAMES and cls.__module__.startswith("gpurules.estimators."):
        _REGISTERED[cls.__name__] = cls


def _estimator_classes():
    """{class name: estimator class} of the names in ``_CLASSES``."""
    return dict(_REGISTERED)


def estimator_to_dict(est):
    """The document of a fitted estimator: its model's plus the ``estimator`` section."""
    check_is_fitted(est, "model_")
    names = getattr(est, "feature_names_in_", None)
    categories = {str(c): encode_values(v, f"feature_categories_[{c}]")
                  for c, v in sorted(est.feature_categories_.items())}
    section = {"class": type(est).__name__,
               "params": {k: _param(k, v) for k, v in est.get_params(deep=False).items()},
               "n_features_in": int(est.n_features_in_),
               "feature_names_in": None if names is None else [str(n) for n in names],
               "feature_categories": categories or None, "device": est.device_,
               **est._prediction_state()}
    return model_to_dict(est.model_, section)


def _param(name, value):
    """A constructor parameter as JSON (a random_state that is no int is stored as null:
    a fitted model does not use it)."""
    if isinstance(value, np.generic):
        value = value.item()
    if name == "random_state" and not isinstance(value, (numbers.Integral, type(None))):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_param(name, v) for v in np.asarray(value, dtype=object).tolist()]
    if value is None or isinstance(value, (bool, int, str)) or \
            (isinstance(value, float) and np.isfinite(value)):
        return value
    raise ValueError(f"parameter {name}={value!r} cannot be stored in a model file (None, "
                     f"bool, int, finite float, str or lists of those only)")


def estimator_from_dict(doc, cls=None):
    """The fitted estimator of a document written by :func:`estimator_to_dict`.

    Args:
        doc: the parsed document.
        cls: the estimator class expected (None: the one the document names).

    Raises:
        ValueError: the document fails :func:`gpurules.model_io.check_document`, has no
            ``estimator`` section (written by ``model.save``), is of another class than
            ``cls``, or is malformed.
    """
    classes = _estimator_classes()
    expected = None if cls is None else next(name for name, c in classes.items()
                                             if issubclass(cls, c))
    kind = check_document(doc, None if cls is None else
                          next(k for k, names in _CLASSES.items() if expected in names))
    model = model_from_dict(doc, kind)
    if doc.get("estimator") is None:
        raise ValueError("the document has no 'estimator' section: it was written by "
                         "model.save(); read it with gpurules.load_model(), or save the "
                         "fitted estimator with estimator.save()")
    node = Node(doc, "").get("estimator")
    name = node.get("class").str(_CLASSES[kind] if cls is None else (expected,))
    params = {k: v.value for k, v in node.get("params").items()}
    try:
        est = (cls or classes[name])(**params)
    except TypeError as err:
        raise ValueError(f"{MALFORMED}: estimator.params do not fit {name} "
                         f"({err})") from None
    est.model_ = model
    _restore_inputs(est, node)
    est._restore_prediction_state(node)
    return est


def _restore_inputs(est, node):
    """The fitted attributes of the inputs: n_features_in_, feature_names_in_,
    feature_categories_, device_."""
    est.n_features_in_ = node.get("n_features_in").int(low=1)
    names = node.optional("feature_names_in")
    if names is not None:
        est.feature_names_in_ = np.asarray(names.strings(est.n_features_in_), dtype=object)
    categories = node.optional("feature_categories")
    est.feature_categories_ = {} if categories is None else {
        _column(key, value, est.n_features_in_): value.values()
        for key, value in categories.items()}
    est.device_ = node.get("device").str()


def _column(key, node, n_features):
    if not key.isdigit() or int(key) >= n_features:
        Node(key, node.path).fail(f"a column index < {n_features}")
    return int(key)


def save_estimator(est, path):
    """Write a fitted estimator to ``path`` (JSON, ``docs/model-format.md``)."""
    write_document(estimator_to_dict(est), path)


def load_estimator(path, cls=None):
    """The fitted estimator saved at ``path`` by ``estimator.save(path)``: a
    ``BoomerClassifier``, ``BoomerRegressor``, ``SeCoClassifier`` or ``TursClassifier``
    (of class ``cls`` if given) whose ``predict``/``predict_proba``/``decision_function`` give bit for bit what
    the saved one gave. Reads JSON only (no pickle).

    Raises:
        ValueError: as :func:`estimator_from_dict`, or the file is no JSON.
    """
    return estimator_from_dict(read_document(path), cls)

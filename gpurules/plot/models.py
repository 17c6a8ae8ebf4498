"""Pictures of a fitted model: its rules, its feature importances, one example's
explanation. Each function takes a fitted ``BoomerClassifier``, ``SeCoClassifier`` or
``TursClassifier``, or its ``model_`` (``RuleModel``, ``DecisionList``, ``TursModel``);
anything else raises ``TypeError``, an unfitted estimator ``NotFittedError``."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from gpurules.decision_list import DecisionList
from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.seco import SeCoClassifier
from gpurules.estimators.turs import TursClassifier
from gpurules.model import RuleModel
from gpurules.model_turs import TursModel
from gpurules.plot._axes import axes
from gpurules.rule_importance import rule_list

ESTIMATORS = (BoomerClassifier, SeCoClassifier, TursClassifier)
MODELS = (RuleModel, DecisionList, TursModel)
# kind: (colour map, colour bar label, centred on 0)
_STYLE = {
    "boomer": ("RdBu_r", "head score", True),
    "seco": ("coolwarm", "predicted value (0/1)", False),
    "turs": ("viridis", "class probability", False),
}
_MAX_TEXT = 48  # characters of a rule's conditions shown as its row label


def fitted(obj):
    """``(estimator or None, model)`` of a fitted estimator or a model; TypeError else."""
    if isinstance(obj, MODELS):
        return None, obj
    if isinstance(obj, ESTIMATORS):
        check_is_fitted(obj, "model_")
        return obj, obj.model_
    raise TypeError(f"expected a fitted BoomerClassifier, SeCoClassifier or TursClassifier "
                    f"(or its model_), got {type(obj).__name__}")


def kind(model):
    """``"boomer"``, ``"seco"`` or ``"turs"``."""
    if isinstance(model, TursModel):
        return "turs"
    return "seco" if isinstance(model, DecisionList) else "boomer"


def output_names(model):
    """list of str, one per output: the label names (BOOMER, SeCo) or the classes (TURS)."""
    if isinstance(model, TursModel):
        return [str(c) for c in model.classes]
    m = rule_list(model)
    return [m._label(k) for k in range(m.num_labels)]


def feature_names(estimator, model, n_features):
    """list of n_features str: the estimator's fitted column names, else the model's
    display names, else ``x0, x1, ...``."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = model.feature_names if isinstance(model, TursModel) else \
            rule_list(model).feature_names
    if names is None or len(names) != n_features:
        return [f"x{f}" for f in range(n_features)]
    return [str(n) for n in names]


def record_row(record, n_outputs):
    """float64 (n_outputs,): what a rule record (``to_records`` / ``explain``) gives each
    output, NaN for the outputs its head leaves out."""
    row = np.full(n_outputs, np.nan)
    if "probabilities" in record:
        row[:] = record["probabilities"]
    else:
        row[record["labels"]] = record["scores"] if "scores" in record else record["values"]
    return row


def record_label(record):
    """The row label of a rule record: ``r<i>: <conditions>``, shortened; the default or
    else-rule by its name; SeCo rules that prediction does not use marked so."""
    if record["rule"] < 0:
        return "default" if record["conditions"] == "true" else "else"
    text = record["conditions"]
    text = text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 1] + "…"
    return f"r{record['rule']}: {text}" + ("" if record.get("active", True) else " (unused)")


def heatmap(ax, matrix, rows, columns, model_kind):
    """Draw ``matrix`` (float (R, K), NaN = no value, left blank) as one image with named
    rows and columns and a colour bar above it; returns the ``AxesImage``."""
    cmap, label, centred = _STYLE[model_kind]
    finite = matrix[np.isfinite(matrix)]
    top = float(np.abs(finite).max()) if finite.size else 1.0
    low, high = (-top, top) if centred else (0.0, 1.0)
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=low, vmax=high,
                      aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(columns)), columns, rotation=90, fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    bar = ax.inset_axes([0.0, 1.02, 1.0, 0.03 * min(1.0, 20 / max(len(rows), 1)) + 0.01])
    ax.figure.colorbar(image, cax=bar, orientation="horizontal", label=label)
    bar.xaxis.set_ticks_position("top")
    bar.xaxis.set_label_position("top")
    return image


def plot_rules(obj, ax=None, max_rules=30):
    """Heat map of rules x outputs with each rule's training coverage as bars beside it.

    Colour: BOOMER the head's score per label (blank: not in the head), SeCo the value
    the rule predicts for each label of its head, TURS the rule's class probabilities.
    The rows are the first ``max_rules`` rules in the order prediction uses them, plus
    the default (BOOMER first, SeCo last) or else-rule (TURS last).

    Args:
        obj: a fitted estimator or its ``model_`` (module docstring).
        ax: the ``Axes`` to draw into (default: a new figure).
        max_rules: int >= 1, how many rules to show (None: all).

    Returns:
        The ``Axes`` of the heat map; the coverage bars are in ``ax.child_axes`` (one
        bar per row; none if the model has no recorded coverage).
    """
    _, model = fitted(obj)
    records = model.to_records()
    learned = [r for r in records if r["rule"] >= 0]
    if max_rules is not None:
        learned = learned[:max_rules]
    shown = [r for r in records if r["rule"] < 0 or r in learned]
    outputs = output_names(model)
    matrix = np.array([record_row(r, len(outputs)) for r in shown]).reshape(-1, len(outputs))
    ax = axes(ax, (3.5 + 0.3 * len(outputs), 1.5 + 0.28 * len(shown)))
    heatmap(ax, matrix, [record_label(r) for r in shown], outputs, kind(model))
    if all(r["coverage"] is not None for r in shown):
        _coverage_bars(ax, [r["coverage"] for r in shown])
    ax.set_xlabel("output")
    return ax


def _coverage_bars(ax, counts):
    """Horizontal bars of ``counts`` (one per heat-map row) in an inset to the right."""
    side = ax.inset_axes([1.03, 0.0, 0.25, 1.0], sharey=ax)
    side.barh(range(len(counts)), counts, color="0.55")
    side.tick_params(labelleft=False, labelsize=8)
    side.set_xlabel("training coverage", fontsize=8)
    return side


def plot_feature_importances(obj, ax=None, top=20):
    """Bar chart of ``feature_importances_`` (definition: ``docs/model-format.md``),
    largest first, named with the estimator's or model's feature names.

    Args:
        obj: a fitted estimator or its ``model_``.
        ax: the ``Axes`` to draw into (default: a new figure).
        top: int >= 1, how many features to show (None: all), those of importance 0 left
            out.

    Returns:
        The ``Axes``: one horizontal bar per feature shown.
    """
    estimator, model = fitted(obj)
    importances = estimator.feature_importances_ if estimator is not None else \
        model.feature_importances()
    names = feature_names(estimator, model, len(importances))
    order = [f for f in np.argsort(-importances, kind="stable") if importances[f] > 0]
    order = order[:top] if top is not None else order
    ax = axes(ax, (6.0, 1.2 + 0.3 * max(len(order), 1)))
    ax.barh(range(len(order)), importances[order], color="C0")
    ax.set_yticks(range(len(order)), [names[f] for f in order], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("feature importance (share of rule weight)")
    return ax


def plot_explanation(obj, x, ax=None):
    """Heat map of the rules that fire for one example (``explain``) x outputs, colour =
    what each contributes (BOOMER scores, SeCo the values of the labels it decides, TURS
    its class probabilities), and a last row with the prediction: BOOMER the summed
    score (``decision_function``), SeCo the predicted labels, TURS ``predict_proba`` (the
    distribution of the union of the fired rules' covers).

    Args:
        obj: a fitted estimator or its ``model_``.
        x: one example: (A,) array-like, or one row (1, A) (a DataFrame row for an
            estimator fitted on a DataFrame).
        ax: the ``Axes`` to draw into (default: a new figure).

    Returns:
        The ``Axes``; ValueError if ``x`` holds more than one example.
    """
    estimator, model = fitted(obj)
    entries = _one_example(estimator or model, x)
    outputs = output_names(model)
    rows = np.array([record_row(e, len(outputs)) for e in entries]).reshape(-1, len(outputs))
    matrix = np.vstack([rows, _prediction(model, entries, rows)])
    labels = [record_label(e) for e in entries] + ["prediction"]
    ax = axes(ax, (3.5 + 0.3 * len(outputs), 1.5 + 0.3 * len(labels)))
    heatmap(ax, matrix, labels, outputs, kind(model))
    ax.axhline(len(entries) - 0.5, color="black", linewidth=1.5)
    ax.set_xlabel("output")
    return ax


def _one_example(explainer, x):
    """The explanation (a list of dicts) of the single example ``x``."""
    if not hasattr(x, "shape"):
        x = np.asarray(x)
    if len(x.shape) == 1:
        x = np.reshape(np.asarray(x), (1, -1))
    if x.shape[0] != 1:
        raise ValueError(f"plot_explanation explains one example, got {x.shape[0]}")
    return explainer.explain(x)[0]


def _prediction(model, entries, rows):
    """float64 (K,): the prediction the fired rules make (see ``plot_explanation``)."""
    if isinstance(model, TursModel):
        return model.union_probabilities([e["rule"] for e in entries if e["rule"] >= 0])
    return np.nansum(rows, axis=0)

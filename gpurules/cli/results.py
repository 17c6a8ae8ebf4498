"""What the command line computes and writes: metrics, their table, predictions, rules.

Multi-label (BOOMER, SeCo) metrics: ``hamming_loss``, ``subset_zero_one_loss`` (1 - subset
accuracy), ``example_f1`` (example-based F1; an example with no relevant and no predicted
label counts 1), ``micro_f1``, ``macro_f1`` (a label never relevant nor predicted counts 1). TURS (classes): ``accuracy``, ``macro_f1``, ``roc_auc``
(two classes: of the second class's probability; more: one-vs-rest, macro-averaged; empty
where a test set lacks a class). Each row also has ``num_rules`` (as ``len(model_)``
counts them) and ``fit_time_s``.
"""

from __future__ import annotations

import csv
import math
import sys

import numpy as np
import scipy.sparse as sp
from sklearn import metrics

MULTI_LABEL_METRICS = ("hamming_loss", "subset_zero_one_loss", "example_f1", "micro_f1",
                       "macro_f1")
CLASS_METRICS = ("accuracy", "macro_f1", "roc_auc")
EXTRA = ("num_rules", "fit_time_s")


def metric_names(learner: str) -> tuple[str, ...]:
    """The metric columns of ``learner`` (without ``fold`` and ``EXTRA``)."""
    return CLASS_METRICS if learner == "turs" else MULTI_LABEL_METRICS


def multi_label_scores(Y, P) -> dict:
    """The multi-label metrics of true labels ``Y`` and predictions ``P`` (n, K) 0/1."""
    Y, P = _dense(Y), _dense(P)
    return {
        "hamming_loss": metrics.hamming_loss(Y, P),
        "subset_zero_one_loss": 1.0 - metrics.accuracy_score(Y, P),
        "example_f1": metrics.f1_score(Y, P, average="samples", zero_division=1.0),
        "micro_f1": metrics.f1_score(Y, P, average="micro", zero_division=1.0),
        "macro_f1": metrics.f1_score(Y, P, average="macro", zero_division=1.0),
    }


def class_scores(y, predicted, proba, classes) -> dict:
    """TURS's metrics of true classes ``y``, predicted classes and probabilities (n, C)
    with columns ``classes``."""
    return {
        "accuracy": metrics.accuracy_score(y, predicted),
        "macro_f1": metrics.f1_score(y, predicted, average="macro", zero_division=0.0),
        "roc_auc": _roc_auc(y, proba, classes),
    }


def _roc_auc(y, proba, classes) -> float:
    """ROC-AUC, NaN where it is undefined (a class missing from ``y``, unseen classes)."""
    present = np.unique(y)
    if len(present) < 2 or not np.isin(present, classes).all():
        return math.nan
    if len(classes) == 2:
        return metrics.roc_auc_score(y == classes[1], proba[:, 1])
    if len(present) < len(classes):
        return math.nan
    return metrics.roc_auc_score(y, proba, multi_class="ovr", labels=classes)


def _dense(Y) -> np.ndarray:
    return Y.toarray() if sp.issparse(Y) else np.asarray(Y)


def summary_rows(rows: list[dict], columns) -> list[dict]:
    """The ``mean`` and ``std`` rows (population std, NaN values left out) of ``rows``."""
    mean, std = {"fold": "mean"}, {"fold": "std"}
    for column in columns:
        values = np.array([row[column] for row in rows], dtype=float)
        values = values[~np.isnan(values)]
        mean[column] = values.mean() if values.size else math.nan
        std[column] = values.std() if values.size else math.nan
    return [mean, std]


def format_table(rows: list[dict], columns, summary: list[dict] | None = None) -> str:
    """An aligned text table of ``rows`` (and a ``mean ± std`` row from ``summary``)."""
    header = ["fold", *columns]
    lines = [[str(row["fold"]), *(_cell(row[c], c) for c in columns)] for row in rows]
    if summary:
        mean, std = summary
        lines.append(["mean ± std", *(f"{_cell(mean[c], c)} ± {_cell(std[c], c)}"
                                      for c in columns)])
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    return "\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(line, widths)))
                     for line in [header, *lines])


_DIGITS = {"num_rules": 1, "fit_time_s": 2}  # decimals in the printed table; else 4


def _cell(value, column) -> str:
    if isinstance(value, (int, np.integer)):
        return str(value)
    return "" if math.isnan(value) else f"{value:.{_DIGITS.get(column, 4)}f}"


def write_metrics(path, rows: list[dict], columns) -> None:
    """``metrics.csv``: a ``fold`` column (1..k or ``test``, then ``mean`` and ``std``)
    and one column per metric, full precision, NaN as an empty cell."""
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["fold", *columns])
        for row in rows:
            writer.writerow([row["fold"], *(_raw(row[c]) for c in columns)])


def _raw(value):
    if isinstance(value, (int, np.integer)):
        return int(value)
    return "" if math.isnan(value) else repr(float(value))


def prediction_header(learner: str, label_names, classes) -> list[str]:
    """The columns of ``predictions.csv`` after ``example`` (and ``fold``): the label
    names (0/1 each), or for TURS ``class`` and ``p(<class>)`` per class."""
    if learner == "turs":
        return ["class", *(f"p({c})" for c in classes)]
    return list(label_names)


def prediction_rows(predicted, proba=None) -> list[list]:
    """The values of :func:`prediction_header` per example: the 0/1 labels of
    ``predicted`` (n, K), or with ``proba`` (TURS) the class and its probabilities."""
    if proba is None:
        predicted = _dense(predicted)
        return predicted.reshape(predicted.shape[0], -1).astype(int).tolist()
    return [[c, *(repr(float(p)) for p in ps)] for c, ps in zip(predicted, proba)]


def write_predictions(path, header: list[str], rows: list[list]) -> None:
    """``predictions.csv`` at ``path``, or on stdout when ``path`` is None."""
    if path is None:
        _write_csv(sys.stdout, header, rows)
        return
    with open(path, "w", newline="", encoding="utf-8") as file:
        _write_csv(file, header, rows)


def _write_csv(file, header, rows) -> None:
    writer = csv.writer(file, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)

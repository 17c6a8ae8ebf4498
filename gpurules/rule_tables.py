"""The rules as data: one record per rule (``to_records``, ``to_frame``) and the rules that
fire for each example (``explain``), for the three kinds of model.

The keys (``docs/model-format.md``, "Rules as data"):

- every record: ``rule`` (int: r of ``model.rule(r)`` / ``model.rules[r]``; -1 for the
  default or else-rule), ``conditions`` (str), ``condition_list`` (list of dicts),
  ``coverage`` (int or None);
- BOOMER: ``labels``, ``label_names``, ``scores`` (the head);
- SeCo: ``labels``, ``label_names``, ``values`` (0/1 predicted), ``heuristic_value``
  (float; None in an ordered list), ``active`` (bool: used by prediction);
- TURS: ``counts`` (training class counts), ``probabilities``.

The model classes' methods call these functions, so this module imports none of them: it
tells the kinds apart by the model's ``kind``.
"""

import numpy as np
import scipy.sparse as sp

from gpurules.conditions import KIND_EQ, KIND_NE, KIND_NUMERIC, OP_EQ, OP_NEQ, OP_SYMBOLS
from gpurules.rule_importance import check_features, coverage, covering_matrix, rule_list

COLUMNS = {
    "boomer": ("rule", "conditions", "condition_list", "labels", "label_names", "scores",
               "coverage"),
    "seco": ("rule", "conditions", "condition_list", "labels", "label_names", "values",
             "heuristic_value", "active", "coverage"),
    "turs": ("rule", "conditions", "condition_list", "counts", "probabilities", "coverage"),
}
_TURS_KIND_TEXT = {KIND_NUMERIC: "numeric", KIND_EQ: "==", KIND_NE: "!="}


def to_records(model, X=None):
    """A list of dicts, one per rule (module docstring); ``coverage`` on X if given, else
    the training coverage the model knows, else None."""
    found = coverage(model, X)
    counts, n = found if found is not None else (None, None)
    if model.kind == "turs":
        uncovered = int(model.else_counts.sum()) if X is None else \
            int((~covering_matrix(model, check_features(model, X)).any(axis=1)).sum())
        rules = [_turs_rule(model, r) for r in range(len(model))]
        rules.append(_turs_else(model))
        cover = [None] * len(model) if counts is None else counts.tolist()
        for record, c in zip(rules, cover + [uncovered]):
            record["coverage"] = c
        return rules
    records = _rule_records(model)
    for record in records:
        r = record["rule"]
        record["coverage"] = None if counts is None else (n if r < 0 else int(counts[r]))
    return records


def to_frame(model, X=None):
    """:func:`to_records` as a ``pandas.DataFrame`` (columns: ``COLUMNS[kind]``)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_frame() needs pandas, an optional dependency: pip install "
                          "'gpurules[pandas]' (or use to_records(), a list of dicts)") from None
    return pd.DataFrame.from_records(to_records(model, X), columns=list(COLUMNS[model.kind]))


def explain(model, X):
    """Per example of X (n, A), the list of the rules that fire (module docstring;
    ``docs/model-format.md``); for one example (A,), its list."""
    single = not sp.issparse(X) and np.ndim(X) == 1
    X = check_features(model, np.reshape(X, (1, -1)) if single else X)
    covered = covering_matrix(model, X)
    if model.kind == "turs":
        out = [_turs_fired(model, row) for row in covered]
    elif model.kind == "seco":
        entries = {r["rule"]: r for r in _rule_records(model)}
        out = [_seco_fired(model, entries, row) for row in covered]
    else:
        entries = _rule_records(model)
        out = [[_entry(e) for e in entries if e["rule"] < 0 or row[e["rule"]]]
               for row in covered]
    return out[0] if single else out


def _entry(record, labels=None, values=None):
    """What ``explain`` shows of a BOOMER/SeCo rule record (optionally a subset of its
    head: ``labels`` and their ``values``)."""
    out = {k: record[k] for k in ("rule", "conditions", "labels", "label_names")}
    key = "scores" if "scores" in record else "values"
    out[key] = record[key]
    if labels is not None:
        out.update(labels=labels, label_names=[record["label_names"][record["labels"].index(k)]
                                               for k in labels], **{key: values})
    return out


# --- BOOMER and SeCo -------------------------------------------------------------------

def _rule_records(model):
    """The records of a BOOMER model (default rule first) or a SeCo list (default last),
    without ``coverage``."""
    m = rule_list(model)
    seco = model.kind == "seco"
    records = []
    for r in range(m.num_rules):
        _, head = m.rule(r)
        record = {"rule": r, "conditions": m.format_rule(r).split(" <- ", 1)[1],
                  "condition_list": _conditions(m, r), **_head(m, head, seco)}
        if seco:
            value = float(model.rule_value[r])
            record["heuristic_value"] = None if model.ordered else value
            record["active"] = bool(model.active_rules()[r])
        records.append(record)
    if m.has_default_rule:
        default = {"rule": -1, "conditions": "true", "condition_list": [],
                   **_head(m, list(enumerate(m.default_scores.tolist())), seco)}
        if seco:
            records.append({**default, "heuristic_value": None, "active": True})
        else:
            records.insert(0, default)
    return records


def _head(m, head, seco):
    labels = [k for k, _ in head]
    values = [int(v) for _, v in head] if seco else [float(v) for _, v in head]
    return {"labels": labels, "label_names": [m._label(k) for k in labels],
            ("values" if seco else "scores"): values}


def _conditions(m, r):
    """The conditions of rule r as dicts: feature, feature_name, op, threshold (the raw
    float32 value as a float) and value (a nominal value's name, else None)."""
    out = []
    for f, op, t in m.rule(r)[0]:
        names = (m.nominal_values or {}).get(f)
        nominal = op in (OP_EQ, OP_NEQ) and names is not None and 0 <= int(t) < len(names)
        out.append({"feature": f, "feature_name": m._feature(f), "op": OP_SYMBOLS[op],
                    "threshold": t, "value": names[int(t)] if nominal else None})
    return out


def _seco_fired(model, entries, row):
    """The rules that decide the labels of one example (first match per label), then the
    default rule for the labels left; a covering rule that decides none has no labels."""
    decided = set()
    out = []
    for r in np.flatnonzero(row & model.active_rules()):
        record = entries[int(r)]
        labels = [k for k in record["labels"] if k not in decided]
        values = [v for k, v in zip(record["labels"], record["values"]) if k not in decided]
        decided.update(labels)
        out.append(_entry(record, labels, values))
    rest = [k for k in range(model.num_labels) if k not in decided]
    if rest:
        out.append(_entry(entries[-1], rest, [entries[-1]["values"][k] for k in rest]))
    return out


# --- TURS ------------------------------------------------------------------------------

def _turs_rule(model, r):
    rule = model.rules[r]
    literals = []
    for f, kind, low, high in zip(rule.feature.tolist(), rule.kind.tolist(),
                                  rule.low.tolist(), rule.high.tolist()):
        names = (model.levels or {}).get(f)
        named = kind != KIND_NUMERIC and names is not None and float(low).is_integer() \
            and 0 <= low < len(names)
        literals.append({"feature": f, "feature_name": model.feature_names[f]
                         if model.feature_names is not None else f"x{f}",
                         "kind": _TURS_KIND_TEXT[kind], "low": low,
                         "high": high if kind == KIND_NUMERIC else None,
                         "value": names[int(low)] if named else None})
    return {"rule": r, "conditions": rule.describe(model.feature_names, model.levels),
            "condition_list": literals, "counts": rule.counts.tolist(),
            "probabilities": rule.probabilities.tolist()}


def _turs_else(model):
    return {"rule": -1, "conditions": "else", "condition_list": [],
            "counts": model.else_counts.tolist(),
            "probabilities": model.else_probabilities().tolist()}


def _turs_fired(model, row):
    """The rules covering one example with their training distribution and coverage, or
    the else-rule; ``predict_proba`` is the distribution of the union of their covers."""
    fired = np.flatnonzero(row)
    if not len(fired):
        return [{**_turs_else(model), "coverage": int(model.else_counts.sum())}]
    return [{**_turs_rule(model, int(r)), "coverage": model.rules[r].coverage} for r in fired]

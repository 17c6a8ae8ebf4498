"""The ``model`` section of a model file for each kind (``docs/model-format.md``).

``encode_*`` turn a fitted model into JSON-ready dicts; ``decode_*`` turn a
:class:`~gpurules.json_fields.Node` back into the model with the same arrays (dtypes and
bits), so that it predicts bit for bit as the model that was saved. A SeCo model is a
BOOMER-style rule list plus the decision-list settings, so both share the rule encoding.

The model classes sit above this module (``RuleModel`` and the others decode their
documents through it), so it imports none of them: the encoders read a model's attributes,
:data:`ENCODERS` is keyed by the model's ``kind``, and each decoder is given the classes it
builds (``RuleModel.decode_model`` and the others pass them).
"""

import base64

import numpy as np

from gpurules.conditions import KIND_EQ, KIND_NE, KIND_NUMERIC, OP_SYMBOLS
from gpurules.json_fields import Node, encode_float, encode_floats, encode_values

_INT32_END = 2 ** 31  # feature indices are int32
_OPS = {symbol: op for op, symbol in OP_SYMBOLS.items()}
_TURS_KINDS = {KIND_NUMERIC: "numeric", KIND_EQ: "==", KIND_NE: "!="}
_TURS_KIND_CODES = {name: code for code, name in _TURS_KINDS.items()}


def _names(names):
    return None if names is None else [str(n) for n in names]


def _levels(levels):
    """{column (str): [value names]} of ``{int column: [names]}``, or None."""
    return None if not levels else {str(int(f)): [str(v) for v in vs] for f, vs in
                                    sorted(levels.items())}


def _read_names(node):
    return None if node is None else node.strings()


def _read_levels(node):
    if node is None:
        return None
    out = {}
    for key, values in node.items():
        if not key.isdigit():
            Node(key, values.path).fail("a column index written as a decimal string")
        out[int(key)] = values.strings()
    return out


# --- BOOMER (RuleModel) and the rules of a SeCo model ---------------------------------

def encode_rule_model(m):
    """The JSON dict of a :class:`RuleModel` (``docs/model-format.md``, kind ``boomer``)."""
    rules = []
    for r in range(m.num_rules):
        c0, c1 = m.rule_cond_start[r], m.rule_cond_start[r + 1]
        h0, h1 = m.rule_head_start[r], m.rule_head_start[r + 1]
        conditions = [{"feature": int(m.cond_feature[c]), "op": OP_SYMBOLS[int(m.cond_op[c])],
                       "threshold": encode_float(m.cond_threshold[c])} for c in range(c0, c1)]
        rules.append({"conditions": conditions,
                      "head": {"labels": m.head_label[h0:h1].tolist(),
                               "scores": encode_floats(m.head_score[h0:h1])}})
    optional = {
        "label_vectors": None if m.label_vectors is None else m.label_vectors.tolist(),
        "label_vector_counts": None if m.label_vector_counts is None else
        m.label_vector_counts.tolist(),
        "training_coverage": None if m.rule_coverage is None else {
            "n_examples": int(m.n_training_examples), "rules": m.rule_coverage.tolist()},
    }
    return {"num_labels": m.num_labels, "has_default_rule": bool(m.has_default_rule),
            "default_scores": encode_floats(m.default_scores), "rules": rules,
            "feature_names": _names(m.feature_names), "label_names": _names(m.label_names),
            "nominal_values": _levels(m.nominal_values), **optional}


def decode_rule_model(node, model_class):
    """The :class:`RuleModel` (``model_class``) of the node written by
    :func:`encode_rule_model`."""
    K = node.get("num_labels").int(low=1)
    rules = node.get("rules").list()
    conditions, heads = [], []
    for rule in rules:
        conditions.append([_read_condition(c) for c in rule.get("conditions").list()])
        head = rule.get("head")
        labels = head.get("labels").ints(np.int32, low=0, high=K)
        heads.append((labels, head.get("scores").floats(length=len(labels))))
    model = _rule_arrays(conditions, heads, model_class)
    model.default_scores = node.get("default_scores").floats(length=K)
    model.has_default_rule = node.get("has_default_rule").bool()
    model.feature_names = _read_names(node.optional("feature_names"))
    model.label_names = _read_names(node.optional("label_names"))
    if model.label_names is not None and len(model.label_names) != K:
        node.get("label_names").fail(f"an array of {K} names (num_labels)")
    model.nominal_values = _read_levels(node.optional("nominal_values"))
    _read_label_vectors(node, model, K)
    coverage = node.optional("training_coverage")
    if coverage is not None:
        model.n_training_examples = coverage.get("n_examples").int(low=0)
        model.rule_coverage = coverage.get("rules").ints(np.int64, low=0, length=len(rules))
    return model


def _read_condition(node):
    """(feature, op, threshold as float32) of a condition object."""
    return (node.get("feature").int(low=0, high=_INT32_END), _OPS[node.get("op").str(tuple(_OPS))],
            np.float32(node.get("threshold").float()))


def _rule_arrays(conditions, heads, model_class):
    """A RuleModel (``model_class``; no default rule yet) of per-rule condition and head
    lists."""
    counts = [len(c) for c in conditions]
    flat = [c for rule in conditions for c in rule]
    starts = np.zeros(len(conditions) + 1, np.int64)
    starts[1:] = np.cumsum(counts)
    head_starts = np.zeros(len(heads) + 1, np.int64)
    head_starts[1:] = np.cumsum([len(labels) for labels, _ in heads])
    return model_class(
        default_scores=None, has_default_rule=False,
        cond_feature=np.array([c[0] for c in flat], np.int32),
        cond_op=np.array([c[1] for c in flat], np.int8),
        cond_threshold=np.array([c[2] for c in flat], np.float32),
        rule_cond_start=starts,
        head_label=np.concatenate([h[0] for h in heads]) if heads else np.zeros(0, np.int32),
        head_score=np.concatenate([h[1] for h in heads]) if heads else np.zeros(0),
        rule_head_start=head_starts)


def _read_label_vectors(node, model, K):
    vectors = node.optional("label_vectors")
    counts = node.optional("label_vector_counts")
    if (vectors is None) != (counts is None):
        node.fail("an object with both label_vectors and label_vector_counts, or neither")
    if vectors is None:
        return
    rows = [v.ints(np.uint8, low=0, high=2, length=K) for v in vectors.list()]
    model.label_vectors = np.array(rows, np.uint8).reshape(len(rows), K)
    model.label_vector_counts = counts.ints(np.int64, low=0, length=len(rows))


# --- SeCo (DecisionList) ---------------------------------------------------------------

def encode_decision_list(dl):
    """The JSON dict of a :class:`DecisionList` (kind ``seco``)."""
    return {"rules": encode_rule_model(dl.rules), "rule_values": encode_floats(dl.rule_value),
            "threshold": encode_float(dl.threshold), "ordered": bool(dl.ordered),
            "label_names": _names(dl.label_names),
            "head_proba": _optional_floats(dl.head_proba),
            "default_proba": _optional_floats(dl.default_proba)}


def _optional_floats(values):
    return None if values is None else encode_floats(values)


def _read_optional_floats(node, length):
    return None if node is None else node.floats(length=length)


def decode_decision_list(node, model_class, rules_class):
    """The :class:`DecisionList` (``model_class``, its rules a ``rules_class``) of the node
    written by :func:`encode_decision_list`."""
    rules = decode_rule_model(node.get("rules"), rules_class)
    values = node.get("rule_values").floats(length=rules.num_rules)
    return model_class(rules, values, node.get("threshold").float(),
                        node.get("ordered").bool(),
                        _read_names(node.optional("label_names")),
                        _read_optional_floats(node.optional("head_proba"),
                                              rules.head_label.shape[0]),
                        _read_optional_floats(node.optional("default_proba"),
                                              rules.num_labels))


# --- TURS (TursModel) ------------------------------------------------------------------

def encode_turs_model(m):
    """The JSON dict of a :class:`TursModel` (kind ``turs``)."""
    rules = [{"literals": [{"feature": int(f), "kind": _TURS_KINDS[int(k)],
                            "low": encode_float(lo), "high": encode_float(hi)}
                           for f, k, lo, hi in zip(r.feature, r.kind, r.low, r.high)],
              "counts": r.counts.tolist()} for r in m.rules]
    covers = [base64.b64encode(row.tobytes()).decode("ascii") for row in m.covers]
    return {"classes": encode_values(m.classes, "classes"), "rules": rules,
            "else_counts": m.else_counts.tolist(), "data_bits": encode_float(m.data_bits),
            "model_bits": encode_float(m.model_bits),
            "feature_names": _names(m.feature_names), "levels": _levels(m.levels),
            "training": {"n_examples": int(m.y.shape[0]), "y": m.y.tolist(),
                         "covers": covers}}


def decode_turs_model(node, model_class, rule_class):
    """The :class:`TursModel` (``model_class``, its rules of ``rule_class``) of the node
    written by :func:`encode_turs_model`."""
    classes = node.get("classes").values()
    C = len(classes)
    rules = [_read_turs_rule(r, C, rule_class) for r in node.get("rules").list()]
    training = node.get("training")
    n = training.get("n_examples").int(low=0)
    y = training.get("y").ints(np.int32, low=0, high=max(C, 1), length=n)
    covers = [_read_cover(c, n) for c in training.get("covers").list(len(rules))]
    packed = np.array(covers, np.uint8).reshape(len(rules), (n + 7) // 8)
    return model_class(rules, node.get("else_counts").ints(np.int64, low=0, length=C), classes,
                     packed, y, node.get("data_bits").float(), node.get("model_bits").float(),
                     _read_names(node.optional("feature_names")),
                     _read_levels(node.optional("levels")))


def encode_turs_binary_relevance(m):
    """The JSON dict of a :class:`TursBinaryRelevanceModel` (kind ``turs``): each label's
    :func:`encode_turs_model` under ``binary_relevance``, in label order."""
    return {"binary_relevance": [encode_turs_model(model) for model in m.models]}


def encode_turs(m):
    """The JSON dict of a TURS model: :func:`encode_turs_binary_relevance` for a model of
    several labels (``models``), else :func:`encode_turs_model`."""
    return encode_turs_binary_relevance(m) if hasattr(m, "models") else encode_turs_model(m)


def decode_turs(node, model_class, rule_class, binary_relevance_class):
    """The TURS model of a ``turs`` node: a :class:`TursBinaryRelevanceModel`
    (``binary_relevance_class``) if it holds ``binary_relevance`` (at least two labels),
    else a :class:`TursModel` (``model_class``, its rules of ``rule_class``)."""
    labels = node.optional("binary_relevance")
    if labels is None:
        return decode_turs_model(node, model_class, rule_class)
    models = [decode_turs_model(label, model_class, rule_class) for label in labels.list()]
    if len(models) < 2:
        labels.fail("a list of at least two TURS models (one per label)")
    return binary_relevance_class(models)


def _read_turs_rule(node, n_classes, rule_class):
    literals = node.get("literals").list()
    kind = [_TURS_KIND_CODES[lit.get("kind").str(tuple(_TURS_KIND_CODES))] for lit in literals]
    return rule_class([lit.get("feature").int(low=0) for lit in literals], kind,
                      [lit.get("low").float() for lit in literals],
                      [lit.get("high").float() for lit in literals],
                      node.get("counts").ints(np.int64, low=0, length=n_classes))


def _read_cover(node, n):
    """uint8 (ceil(n/8),): a rule's packed training cover from base64."""
    try:
        raw = base64.b64decode(node.str(), validate=True)
    except ValueError:
        node.fail("base64 text")
    if len(raw) != (n + 7) // 8:
        node.fail(f"base64 of {(n + 7) // 8} bytes (n_examples bits, packed)")
    return np.frombuffer(raw, np.uint8)


# a model's ``kind`` -> the encoder of its ``model`` section
ENCODERS = {"boomer": encode_rule_model, "seco": encode_decision_list, "turs": encode_turs}

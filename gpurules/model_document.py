"""The model file's document, written and read without pickle and without the model
classes.

The document (``docs/model-format.md``) is ``{"format": "gpurules-model",
"schema_version": 1, "kind": "boomer" | "seco" | "turs", "library_version": str,
"model": {...}}``, plus an ``"estimator"`` section when a fitted estimator was saved
(``gpurules.estimators.persistence``). The ``model`` section of each kind is in
``model_codec``.

Versioning: a reader accepts every ``schema_version`` up to :data:`SCHEMA_VERSION`; a newer
one raises ``ValueError`` (upgrade gpurules). A change that old readers would misread
increases the version; new optional members that old readers may ignore do not.

Layering: the model classes' methods (``model_methods``) write and check documents here,
so this module knows a model only by its class's ``kind``. Turning a document of any kind
back into a model needs the classes: that is ``model_io`` (``load_model``), above them.
"""

import json
from pathlib import Path

from gpurules.json_fields import MALFORMED, Node
from gpurules.model_codec import ENCODERS
from gpurules.version import __version__

FORMAT = "gpurules-model"
SCHEMA_VERSION = 1
KINDS = ("boomer", "seco", "turs")


def model_kind(model):
    """``"boomer"``, ``"seco"`` or ``"turs"`` of a model object (TypeError for others)."""
    kind = getattr(type(model), "kind", None)
    if kind not in KINDS:
        raise TypeError(f"not a gpurules model: {type(model).__name__}")
    return kind


def model_to_dict(model, estimator=None):
    """The document of ``model`` (a RuleModel, DecisionList or TursModel) as a dict of
    JSON types; ``estimator``: the optional ``estimator`` section."""
    kind = model_kind(model)
    doc = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "kind": kind,
           "library_version": __version__, "model": ENCODERS[kind](model)}
    if estimator is not None:
        doc["estimator"] = estimator
    return doc


def check_document(doc, kind=None):
    """The kind of a model document after checking its envelope.

    Args:
        doc: the parsed JSON document.
        kind: the kind the caller reads, or None for any.

    Raises:
        ValueError: ``doc`` is no object, its ``format`` is not ``"gpurules-model"``, its
            ``schema_version`` is not an integer >= 1 or newer than this version reads, or
            its ``kind`` is unknown or not ``kind``.
    """
    if not isinstance(doc, dict):
        raise ValueError(f"not a gpurules model: the document must be a JSON object, got "
                         f"{type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise ValueError(f"not a gpurules model: format is {doc.get('format')!r}, expected "
                         f"{FORMAT!r}")
    version = Node(doc, "").get("schema_version")
    if version.int(low=1) > SCHEMA_VERSION:
        raise ValueError(f"schema_version {version.value} is newer than this gpurules "
                         f"{__version__} reads (up to {SCHEMA_VERSION}); upgrade gpurules "
                         f"to load this model")
    found = doc.get("kind")
    if found not in KINDS:
        raise ValueError(f"unknown model kind {found!r}: expected one of "
                         f"{', '.join(map(repr, KINDS))}")
    if kind is not None and found != kind:
        raise ValueError(f"wrong model kind: the document holds a {found!r} model, expected "
                         f"{kind!r} (gpurules.load_model reads any kind)")
    return found


def model_section(doc, kind=None):
    """``(kind, node)``: the kind of a document (:func:`check_document`) and its ``model``
    section as a :class:`~gpurules.json_fields.Node`, for a model class's ``decode_model``."""
    return check_document(doc, kind), Node(doc, "").get("model")


def write_document(doc, path):
    """Write ``doc`` to ``path`` as standard JSON (UTF-8; NaN and infinities are never
    written as bare tokens)."""
    text = json.dumps(doc, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    Path(path).write_text(text + "\n", encoding="utf-8")


def read_document(path):
    """The parsed JSON document at ``path``; ValueError naming the file if it is no JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{MALFORMED}: {path} is not JSON text ({err})") from None


def save_model(model, path):
    """Write ``model`` (RuleModel, DecisionList or TursModel) to ``path`` as JSON."""
    write_document(model_to_dict(model), path)

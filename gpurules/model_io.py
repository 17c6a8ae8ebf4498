"""Reading a model file of any kind: ``load_model`` and ``model_from_dict``.

This module sits above the model classes: it maps a document's ``kind`` to the class that
decodes it (:data:`MODEL_CLASSES`). Everything that needs no model class (the document's
envelope, writing, reading JSON, ``model_to_dict``) is in ``model_document``, which the
model classes' own methods use; it is re-exported here, where ``gpurules.estimators``
and the tests have always found it.
"""

from gpurules.decision_list import DecisionList
from gpurules.model import RuleModel
from gpurules.model_document import (FORMAT, KINDS, SCHEMA_VERSION, check_document,
                                     model_kind, model_section, model_to_dict, read_document,
                                     save_model, write_document)
from gpurules.model_turs import TursModel

__all__ = ["FORMAT", "KINDS", "MODEL_CLASSES", "SCHEMA_VERSION", "check_document",
           "load_model", "model_from_dict", "model_kind", "model_to_dict", "read_document",
           "save_model", "write_document"]

# a document's kind -> the class that decodes its ``model`` section (a ``turs`` section of
# several labels decodes to a TursBinaryRelevanceModel)
MODEL_CLASSES = {"boomer": RuleModel, "seco": DecisionList, "turs": TursModel}


def model_from_dict(doc, kind=None):
    """The model of a document (:func:`model_to_dict`); ``kind``: the kind expected (None:
    any). Raises ``ValueError`` naming what is wrong (:func:`check_document`, or the path of
    a malformed member such as ``model.rules[2].head.labels``)."""
    found, section = model_section(doc, kind)
    return MODEL_CLASSES[found].decode_model(section)


def load_model(path, kind=None):
    """The model saved at ``path`` by ``model.save(path)`` or ``estimator.save(path)``.

    Returns a ``RuleModel`` (kind ``boomer``), ``DecisionList`` (``seco``) or ``TursModel``
    (``turs``) that predicts bit for bit as the saved one. Reads JSON only (no pickle); an
    ``estimator`` section is ignored (``gpurules.load_estimator`` reads it).

    Raises:
        ValueError: the file is no JSON, not a gpurules model, of a newer
            ``schema_version``, of another ``kind`` than ``kind`` (if given), or malformed;
            the message names the problem.
    """
    return model_from_dict(read_document(path), kind)

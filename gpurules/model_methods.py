"""What the three model classes (``RuleModel``, ``DecisionList``, ``TursModel``) share:
saving and loading (``model_document``, ``model_codec``) and the rules as data
(``rule_tables``, ``rule_importance``).

The work is done in those modules, which sit below the model classes and import none of
them: they tell the kinds apart by the class attribute ``kind``, and decoding, which must
build objects of the model classes, goes through each class's ``decode_model``, which
passes its classes to ``model_codec``. So every import runs downwards: model classes ->
this module -> the modules that do the work (``docs/architecture.md``).
"""

import numpy as np

from gpurules import rule_importance, rule_tables
from gpurules.model_document import model_section, model_to_dict, save_model


class ModelMethods:
    """Files and tables of a fitted model; a base of the three model classes.

    A subclass sets ``kind`` (``"boomer"``, ``"seco"``, ``"turs"``: the document's
    ``kind``) and the classmethod ``decode_model(node)``: its model of a document's
    ``model`` section (a :class:`~gpurules.json_fields.Node`).
    """

    kind = None

    def __setstate__(self, state):
        """Unpickling (``pickle``, ``joblib.load``): read-only arrays, as
        ``joblib.load(path, mmap_mode="r")`` maps them, become writable copies (a model's
        arrays are small). The compiled predictors are specialised on whether an array is
        read-only, so read-only arrays would compile them a second time (seconds), as
        ``estimators.validation.compiled_layout`` says of X."""
        self.__dict__.update({
            name: np.array(value) if isinstance(value, np.ndarray) and
            not value.flags.writeable else value for name, value in state.items()})

    def to_dict(self):
        """The model file's document (``docs/model-format.md``): a dict of JSON types."""
        return model_to_dict(self)

    @classmethod
    def from_dict(cls, doc):
        """The model of a document written by :meth:`to_dict` (or read from a file).
        ``ValueError`` if the document is malformed, newer than this version reads, or
        holds another kind of model."""
        _, section = model_section(doc, cls.kind)
        model = cls.decode_model(section)
        if not isinstance(model, cls):  # a kind with two model classes (turs)
            raise ValueError(f"the document holds a {type(model).__name__}, not a "
                             f"{cls.__name__}")
        return model

    def save(self, path):
        """Write the model to ``path`` as JSON (``gpurules.load_model`` reads it back)."""
        save_model(self, path)

    def to_records(self, X=None):
        """The rules as a list of dicts, one per rule (the default or else-rule included,
        ``rule == -1``); the keys of each kind are listed in ``docs/model-format.md``.

        Args:
            X: optional features (n, A) (array-like or scipy sparse; nominal values as
                their codes, NaN = missing): ``coverage`` counts the examples of X that
                satisfy each rule's body. Without X it is the training coverage recorded
                at fit, or None where the model has none.
        """
        return rule_tables.to_records(self, X)

    def to_frame(self, X=None):
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional:
        ``pip install gpurules[pandas]``; ImportError without it)."""
        return rule_tables.to_frame(self, X)

    def explain(self, X):
        """The rules that fire for each example of ``X`` and what they contribute.

        Args:
            X: features (n, A) or one example (A,), as for :meth:`to_records`.

        Returns:
            For (n, A): a list of n lists of dicts (one per firing rule, in the order
            prediction uses them); for (A,): that example's list. See
            ``docs/model-format.md`` for the keys of each kind.
        """
        return rule_tables.explain(self, X)

    def feature_importances(self, n_features=None, X=None):
        """float64 (n_features,) summing to 1 (or all 0 when no rule has a condition):
        the importance of each feature (definition: ``docs/model-format.md``).

        Args:
            n_features: the number of features (default: the feature names' count, else
                the largest feature index used + 1).
            X: optional features to count coverage on (default: the training coverage
                recorded at fit; ValueError if the model has none).
        """
        return rule_importance.feature_importances(self, n_features, X)

"""What the three model classes (``RuleModel``, ``DecisionList``, ``TursModel``) share:
saving and loading (``model_io``) and the rules as data (``rule_tables``). The work is done
in those modules, imported when a method is called."""


class ModelMethods:
    """Files and tables of a fitted model; a base of the three model classes."""

    def to_dict(self):
        """The model file's document (``docs/model-format.md``): a dict of JSON types."""
        from gpurules.model_io import model_to_dict

        return model_to_dict(self)

    @classmethod
    def from_dict(cls, doc):
        """The model of a document written by :meth:`to_dict` (or read from a file).
        ``ValueError`` if the document is malformed, newer than this version reads, or
        holds another kind of model."""
        from gpurules.model_codec import ENCODERS
        from gpurules.model_io import model_from_dict

        model = model_from_dict(doc, ENCODERS[cls][0])
        if not isinstance(model, cls):  # a kind with two model classes (turs)
            raise ValueError(f"the document holds a {type(model).__name__}, not a "
                             f"{cls.__name__}")
        return model

    def save(self, path):
        """Write the model to ``path`` as JSON (``gpurules.load_model`` reads it back)."""
        from gpurules.model_io import save_model

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
        from gpurules.rule_tables import to_records

        return to_records(self, X)

    def to_frame(self, X=None):
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional:
        ``pip install gpurules[pandas]``; ImportError without it)."""
        from gpurules.rule_tables import to_frame

        return to_frame(self, X)

    def explain(self, X):
        """The rules that fire for each example of ``X`` and what they contribute.

        Args:
            X: features (n, A) or one example (A,), as for :meth:`to_records`.

        Returns:
            For (n, A): a list of n lists of dicts (one per firing rule, in the order
            prediction uses them); for (A,): that example's list. See
            ``docs/model-format.md`` for the keys of each kind.
        """
        from gpurules.rule_tables import explain

        return explain(self, X)

    def feature_importances(self, n_features=None, X=None):
        """float64 (n_features,) summing to 1 (or all 0 when no rule has a condition):
        the importance of each feature (definition: ``docs/model-format.md``).

        Args:
            n_features: the number of features (default: the feature names' count, else
                the largest feature index used + 1).
            X: optional features to count coverage on (default: the training coverage
                recorded at fit; ValueError if the model has none).
        """
        from gpurules.rule_importance import feature_importances

        return feature_importances(self, n_features, X)

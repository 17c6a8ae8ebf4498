"""SeCoClassifier: separate-and-conquer multi-label rules with mlrl-seco's parameters."""

import numpy as np
import scipy.sparse as sp

from sklearn.utils.validation import check_is_fitted

from gpurules.backends.factory import backend_class
from gpurules.estimators._base import store_params, take_rows
from gpurules.estimators.multi_label import MultiLabelRuleClassifier
from gpurules.estimators.seco_params import SUPPORTED, parse, resolve_config
from gpurules.estimators.validation import count_weights
from gpurules.learners.covering import CoveringLearner


class SeCoClassifier(MultiLabelRuleClassifier):
    """Separate-and-conquer multi-label rule learning (mlrl-seco's SeCo algorithm).

    Parameter names, value strings and effective defaults follow mlrl-seco 0.15; ``None``
    means the mlrl-seco default (see ``docs/seco.md``). Values this version does not
    support raise ``ValueError`` listing the supported ones. ``device`` chooses the backend
    (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``; the GPU runs the histogram search,
    so ``feature_binning="none"``, mlrl-seco's default, runs on the CPU with ``"auto"`` and
    raises with an explicit CUDA device). ``rule_set`` is our addition:
    ``"decision-list"`` (mlrl-seco) or ``"unordered{...}"``, the random-forest variant of
    Rapp et al. (see ``gpurules.learners.seco_unordered``), which runs on the CPU only (with
    ``"auto"`` it does, said in a log line; an explicit CUDA device raises). ``verbose``
    (int >= 0, our addition) logs the fit's progress through the ``"gpurules"`` logger as
    in ``BoomerClassifier`` (see ``gpurules.progress``).

    ``fit(..., sample_weight=w)`` (our addition): non-negative integers (n,); an example of
    weight w counts w times in every confusion matrix and in the majority of the default
    rule, so the model is the one learned from w copies of its row (without instance
    sampling, which draws rows; ``min_coverage`` and ``min_support`` count rows). Examples
    of weight 0 are left out; ``rule_set="unordered"`` repeats the rows. A float weight
    raises ValueError (the rules are chosen by counts).

    ``predict_proba`` (our addition; mlrl-seco 0.15 has none): the probability that a
    label is relevant is the Laplace-corrected confidence ``(c + 1) / (d + 2)`` of the rule
    that decides the label in ``predict`` (the first covering rule that predicts it, else
    the default rule), where ``d`` counts the (weighted) training examples that rule
    decided for the label and ``c`` those whose label is the value the rule predicts; one
    minus it where the rule predicts 0 (``gpurules.decision_list``).

    Fitted attributes:
        model_: DecisionList (NumPy arrays only; ``len`` counts the default rule).
        device_: str, the device used.
        n_features_in_, n_outputs_: ints; feature_names_in_, feature_categories_: as
            in ``BoomerClassifier``; classes_: the two classes of a 1-D y, else one
            ``[0, 1]`` array per label.
    """

    _SUPPORTED = SUPPORTED
    _resolve_config = resolve_config  # a method: self -> (CoveringConfig, threads)

    def __init__(self, random_state=1, feature_format=None, output_format=None,
                 prediction_format=None, rule_induction=None, max_rules=None, time_limit=None,
                 post_optimization=None, head_type=None, lift_function=None, heuristic=None,
                 pruning_heuristic=None, output_sampling=None, instance_sampling=None,
                 feature_sampling=None, holdout=None, feature_binning=None, rule_pruning=None,
                 parallel_rule_refinement=None, parallel_statistic_update=None,
                 parallel_prediction=None, rule_set=None, device="auto", verbose=0):
        store_params(self, locals())

    def _fit_weights(self, sample_weight, n_examples):
        """int64 (n,) or None (all ones): ``validation.count_weights``."""
        return count_weights(sample_weight, n_examples, type(self).__name__)

    def _learn(self, config, data, progress):
        """A decision list (``learners.covering``) or, for ``rule_set='unordered'``, an
        unordered rule set (``learners.seco_unordered``, on the CPU)."""
        X, Y, weight, threads = data.info.X, data.Y, data.weight, self._threads
        if weight is not None and not weight.all():  # weight 0: as if the row were absent
            X, Y, weight = take_rows(X, weight > 0), Y[weight > 0], weight[weight > 0]
        rule_set, options = parse("rule_set", self.rule_set)
        if rule_set == "unordered":
            from gpurules.learners.seco_unordered import fit_unordered

            self._run_on_cpu("rule_set='unordered' runs on the CPU only",
                             f"device={self.device!r}: rule_set='unordered' runs on the CPU "
                             f"only; use device='cpu' (or 'auto')")

            dense = X.toarray() if sp.issparse(X) else X
            if weight is not None:  # the forests draw rows: w copies of each
                rows = np.repeat(np.arange(Y.shape[0]), weight)
                dense, Y = dense[rows], Y[rows]
            builder = fit_unordered(dense, Y, data.nominal, config, options, data.rng,
                                    threads["search"], progress)
            ordered, threshold = False, options["threshold"]
        else:
            features = self._feature_representation(X, data.nominal, data.sparse_value)
            backend = self._make_backend(threads)
            # a backend that prefers it refines a rule with a fixed head on its labels alone
            narrow = self._make_backend(threads) if \
                backend_class(self._device).narrow_head_search else None
            # the splittable filter reads the coverage after every condition: only where
            # that costs no copy from a device (the same model either way)
            values = X if backend_class(self._device).host_coverage else None
            learner = CoveringLearner(config, backend, data.rng, narrow, values, progress)
            builder = learner.fit(features, Y, weight)
            ordered, threshold = True, -np.inf
        return builder.build(ordered, threshold, feature_names=data.info.names,
                             label_names=data.label_names,
                             nominal_values=data.info.levels or None)

    def predict(self, X):
        """Labels: uint8 (n, K) of 0/1 (CSR if ``prediction_format='sparse'``), or the
        classes of a 1-D y. Each label comes from the first rule that covers the example
        and predicts it, else from the default rule."""
        X = self._predict_features(X)
        return self._label_output(self.model_.predict(X, self._threads["predict"]))

    def predict_proba(self, X):
        """The probability that each label is relevant (see the class docstring): float64
        (n, K), or (n, 2) columns for ``classes_`` after a 1-D y."""
        check_is_fitted(self, "model_")
        X = self._predict_features(X)
        proba = self.model_.predict_proba(X, self._threads["predict"])
        if self._one_d:
            return np.column_stack([1.0 - proba[:, 0], proba[:, 0]])
        return proba

"""BOOMER's parameters: their resolution against the tables of supported values
(``boomer_tables``, mlrl-boomer 0.15 strings).

``resolve_config`` turns the estimator's constructor arguments into a ``BoostingConfig``
plus thread counts, raising ``ValueError`` for anything unsupported.
"""

import dataclasses
import os

import numba
import numpy as np

from gpurules.estimators.boomer_tables import LOSSES, PARALLEL, SUPPORTED
from gpurules.estimators.options import (MAX_RULES_LIMIT, check_feature_sampling,
                                         check_number, check_sample_counts,
                                         parse_option_value)
from gpurules.estimators.validation import TargetLayout
from gpurules.exceptions import warn
from gpurules.learners.boosting import BoostingConfig
from gpurules.learners.holdout import Holdout
from gpurules.learners.post_optimization import SequentialPostOptimization
from gpurules.learners.pruning import AGGREGATIONS, PostPruning, PrePruning
from gpurules.learners.sampling import FeatureSampling, InstanceSampling, OutputSampling
from gpurules.objectives import predictors
from gpurules.objectives.calibration import JointCalibration, MarginalCalibration
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import REGRESSION_LOSSES
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE,
                                              SELECT_ALL, SELECT_DYNAMIC, SELECT_FIXED,
                                              multi_output_params)


#: ``statistic_type`` -> ``BoostingConfig.statistic_bits`` (mlrl-boomer's default: 32-bit)
STATISTIC_BITS = {"32-bit": 32, "float32": 32, "64-bit": 64, "float64": 64}


def parse(param, value):
    return parse_option_value(param, value, SUPPORTED[param])


def _param(est, param, default=None):
    """(name, options) of the estimator's parameter ``param``, parsed against its own
    table (``est._SUPPORTED``: the classifier's ``SUPPORTED`` or ``REGRESSOR_SUPPORTED``);
    ``default`` replaces a value that is None or empty."""
    value = getattr(est, param)
    if default is not None:
        value = value or default
    return parse_option_value(param, value, est._SUPPORTED[param])


def num_threads(param, value):
    """Threads for one parallelisable phase: 1 for 'false', all cores for 'auto'/'true'
    (``num_preferred_threads`` if fewer), at most Numba's thread count
    (``NUMBA_NUM_THREADS``, which joblib's process workers, e.g. a ``GridSearchCV`` with
    ``n_jobs``, set to their share of the cores; the threads of a team, ``jit.team``, are
    not Numba's own and would not be capped otherwise)."""
    name, opts = parse_option_value(param, value, PARALLEL)
    if name == "false":
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    available = min(cores, numba.config.NUMBA_NUM_THREADS)  # (both at least 1)
    preferred = opts.get("num_preferred_threads", 0)
    return max(1, min(preferred, available)) if preferred > 0 else available


def _head(est, loss_name, l1, l2, head_type_rule, statistics, num_outputs):
    """(head_mode, head_params or None, the resolved head type) of ``head_type`` and
    ``label_binning`` (a regressor has none: 'none');
    ``head_type_rule(head_type, loss_name, sparse_statistics, num_outputs)`` resolves
    ``auto`` (the classifier's: ``objectives.predictors.resolve_head_type``) for the
    ``statistics`` (``predictors.StatisticsFormat``)."""
    head_value = est.head_type or "auto"
    head_type, head_opts = parse("head_type", head_value)
    head_type = head_type_rule(head_type, loss_name, statistics.sparse, num_outputs)
    if head_type != head_value.split("{")[0]:  # 'auto' resolved: the new type's defaults
        head_opts = SUPPORTED["head_type"][head_type]
    binning_name, binning = parse("label_binning",
                                  getattr(est, "label_binning", "none") or "auto")
    binning_name = predictors.resolve_label_binning(binning_name, loss_name, head_type)
    if binning_name == "equal-width":
        binning = {**SUPPORTED["label_binning"]["equal-width"], **binning}
        check_number("label_binning bin_ratio", binning["bin_ratio"], low=0, high=1,
                     low_open=True)
        check_number("label_binning min_bins", binning["min_bins"], low=1, integer=True)
        check_number("label_binning max_bins", binning["max_bins"], low=0, integer=True)
    non_decomposable = predictors.is_non_decomposable(loss_name)
    if head_type == "single":
        return (HEAD_ND_SINGLE if non_decomposable else HEAD_SINGLE), None, head_type
    if head_type == "complete" and not non_decomposable and binning_name == "none":
        return HEAD_COMPLETE, None, head_type
    selection, options = SELECT_ALL, (0.0, 0.0, 0.0)
    if head_type == "partial-fixed":
        check_number("head_type output_ratio", head_opts["output_ratio"], low=0, high=1)
        check_sample_counts("head_type", head_type, head_opts, "min_outputs", "max_outputs")
        selection = SELECT_FIXED
        options = (head_opts["output_ratio"], head_opts["min_outputs"],
                   head_opts["max_outputs"])
    elif head_type == "partial-dynamic":
        check_number("head_type threshold", head_opts["threshold"], low=0, high=1,
                     low_open=True)
        check_number("head_type exponent", head_opts["exponent"], low=1)
        selection, options = SELECT_DYNAMIC, (head_opts["threshold"], head_opts["exponent"],
                                              0.0)
    binned = None if binning_name == "none" else (
        binning["bin_ratio"], binning["min_bins"], binning["max_bins"])
    return HEAD_MULTI_OUTPUT, multi_output_params(l1, l2, non_decomposable, selection,
                                                  options, binned), head_type


def resolve_sampling(est, param, sampling_class):
    """``instance_sampling`` / ``output_sampling`` as ``sampling_class`` (``learners.
    sampling``), after mlrl-boomer's checks: ``sample_size`` in (0, 1) (with-replacement:
    (0, 1]), ``min_samples >= 1``, ``max_samples`` 0 or ``>= min_samples``."""
    name, opts = _param(est, param)
    if not opts:  # none, round-robin
        return sampling_class(name)
    size = check_number(f"{param} sample_size", opts["sample_size"], low=0, high=1,
                        low_open=True)
    if size == 1 and name != "with-replacement":
        raise ValueError(f"{param}={name!r}: sample_size must be < 1, got {size!r}")
    return sampling_class(name, size, *check_sample_counts(param, name, opts))


def resolve_pruning(est):
    """``global_pruning`` as a ``PrePruning`` / ``PostPruning`` (``learners.pruning``) or
    None, after mlrl-boomer's checks of its options."""
    name, opts = _param(est, "global_pruning")
    if name == "none":
        return None
    if not opts["remove_unused_rules"]:
        raise ValueError(f"global_pruning={est.global_pruning!r}: remove_unused_rules=false "
                         f"is not supported (mlrl-boomer keeps the unused rules in the model "
                         f"without predicting with them); supported: remove_unused_rules=true")
    check_number(f"{name} min_rules", opts["min_rules"], low=1, integer=True)
    if name == "post-pruning":
        check_number("post-pruning interval", opts["interval"], low=1, integer=True)
        return PostPruning(opts["use_holdout_set"], opts["min_rules"], opts["interval"])
    for key in ("update_interval", "stop_interval", "num_past", "num_recent"):
        check_number(f"pre-pruning {key}", opts[key], low=1, integer=True)
    if opts["stop_interval"] % opts["update_interval"]:
        raise ValueError(f"pre-pruning stop_interval={opts['stop_interval']} must be a "
                         f"multiple of update_interval={opts['update_interval']}")
    check_number("pre-pruning min_improvement", opts["min_improvement"], low=0, high=1)
    if opts["aggregation"] not in AGGREGATIONS:
        raise ValueError(f"pre-pruning aggregation={opts['aggregation']!r} is not supported; "
                         f"supported values: {', '.join(map(repr, AGGREGATIONS))}")
    return PrePruning(opts["use_holdout_set"], opts["min_rules"], opts["update_interval"],
                      opts["stop_interval"], opts["num_past"], opts["num_recent"],
                      opts["min_improvement"], opts["aggregation"])


def _isotonic_calibration(est, param, kind):
    """``param`` (``marginal_probability_calibration`` / ``joint_probability_calibration``)
    as a ``kind`` (``objectives.calibration`` calibrator) or None; isotonic calibration
    needs a loss with probabilities (mlrl-boomer silently skips it for the others)."""
    name, opts = parse(param, getattr(est, param))
    if name == "none":
        return None
    loss_name, _ = parse("loss", est.loss or "logistic-decomposable")
    if not predictors.has_probabilities(loss_name):
        raise ValueError(f"{param}={name!r} needs a loss with probabilities; "
                         f"loss={loss_name!r} has none; supported values for this loss: "
                         f"'none'")
    return kind(bool(opts["use_holdout_set"]))


def resolve_calibration(est):
    """``marginal_probability_calibration`` as an ``objectives.calibration.
    MarginalCalibration`` or None."""
    return _isotonic_calibration(est, "marginal_probability_calibration", MarginalCalibration)


def resolve_joint_calibration(est):
    """``joint_probability_calibration`` as an ``objectives.calibration.JointCalibration``
    or None."""
    return _isotonic_calibration(est, "joint_probability_calibration", JointCalibration)


def resolve_post_optimization(est):
    """``post_optimization`` as a ``learners.post_optimization.SequentialPostOptimization``
    or None; ``num_iterations`` must be an int >= 1 (mlrl-boomer's check)."""
    name, opts = _param(est, "post_optimization")
    if name == "none":
        return None
    check_number("post_optimization num_iterations", opts["num_iterations"], low=1,
                 integer=True)
    return SequentialPostOptimization(opts["num_iterations"], opts["refine_heads"],
                                      opts["resample_features"])


def resolve_irep(est, instance_sampling):
    """Whether ``rule_pruning`` is ``irep``. IREP prunes on the training examples that the
    instance sample leaves out, so it needs ``instance_sampling`` (mlrl-boomer accepts
    'none': without a holdout set it then never prunes, with one it cuts every rule to its
    first condition, scored on an empty prune set)."""
    name, _ = _param(est, "rule_pruning", "none")
    if name == "irep" and instance_sampling.kind == "none":
        raise ValueError("rule_pruning='irep' prunes each rule on the training examples its "
                         "instance sample leaves out, and instance_sampling='none' leaves "
                         "none out; set instance_sampling (e.g. 'without-replacement') or "
                         "use rule_pruning='none'")
    return name == "irep"


def resolve_holdout(est, pruning, calibrations=()):
    """``holdout`` as a ``learners.holdout.Holdout``. 'auto' (mlrl-boomer's default):
    ``stratified-output-wise`` (a regressor's: ``random``) if global pruning or one of the
    ``calibrations`` (calibrators or None) asks for a holdout set, else none."""
    name, opts = _param(est, "holdout")
    if name == "auto":
        use = (pruning is not None and pruning.use_holdout_set) or \
            any(c is not None and c.use_holdout_set for c in calibrations)
        stratified = "stratified-output-wise" in est._SUPPORTED["holdout"]
        name = ("stratified-output-wise" if stratified else "random") if use else "none"
        opts = SUPPORTED["holdout"].get(name, {})
    if name == "none":
        return Holdout()
    size = check_number("holdout holdout_set_size", opts["holdout_set_size"], low=0, high=1,
                        low_open=True)
    if size == 1:
        raise ValueError(f"holdout holdout_set_size must be < 1, got {size!r}")
    return Holdout(name, size)


def with_label_ratio(config, Y):
    """``config`` with a partial-fixed head's ``output_ratio = 0`` replaced by the label
    cardinality / K of ``Y`` (uint8 (n, K)), as mlrl-boomer's ``calculateLabelRatio``."""
    return with_output_ratio(config, lambda: float(Y.sum()) / max(Y.size, 1))


def with_output_ratio(config, ratio):
    """``config`` with a partial-fixed head's ``output_ratio = 0`` replaced by ``ratio()``
    (a callable returning a float in (0, 1])."""
    params = config.head_params
    if params is None or params[3] != SELECT_FIXED or params[4] != 0.0:
        return config
    params = params.copy()
    params[4] = ratio()
    return dataclasses.replace(config, head_params=params)


def resolve_predictors(est, loss_name):
    """(binary predictor, probability predictor or None) after mlrl-boomer's ``auto``
    rules; the probability predictor is None for losses without probabilities."""
    binary_name, binary_opts = parse("binary_predictor", est.binary_predictor or "auto")
    if binary_opts.get("based_on_probabilities", False) and \
            not predictors.has_probabilities(loss_name):
        raise ValueError(f"binary_predictor={est.binary_predictor!r}: "
                         f"based_on_probabilities=true needs a loss with probabilities; "
                         f"loss={loss_name!r} has none (use based_on_probabilities=false)")
    if binary_name == "gfm" and not predictors.has_probabilities(loss_name):
        raise ValueError(f"binary_predictor={est.binary_predictor!r} needs the joint "
                         f"probabilities of a loss with probabilities; loss={loss_name!r} "
                         f"has none (use 'logistic-decomposable' or "
                         f"'logistic-non-decomposable')")
    binary = predictors.resolve_binary_predictor(binary_name, loss_name)
    value = parse("probability_predictor", est.probability_predictor or "auto")[0]
    try:
        probability = predictors.resolve_probability_predictor(value, loss_name)
    except ValueError:
        probability = None
    return binary, probability


def resolve_config(est, targets=None):
    """Validate the classifier's parameters. Returns (BoostingConfig, threads dict);
    ``targets``: as for :func:`_resolve_config`."""
    return _resolve_config(est, LOSSES, predictors.resolve_head_type,
                           lambda: (resolve_calibration(est), resolve_joint_calibration(est)),
                           targets)


def _resolve_config(est, losses, head_type_rule, calibrations, targets=None):
    """Validate the parameters of ``est`` (a classifier or regressor: its ``_SUPPORTED``
    table) with its ``losses`` ({value string: loss spec}), the ``auto`` rule of its
    head type (see :func:`_head`) and ``calibrations()``, its probability calibrations
    (calibrators or None, for the holdout's ``auto`` rule), for the label matrix
    ``targets`` (``validation.TargetLayout``; None: dense labels, before the data is
    seen), on which the ``auto`` rules of ``statistic_format`` and ``default_rule``
    depend (``predictors.resolve_statistics_format``). Returns (BoostingConfig, threads
    dict)."""
    for param in est._SUPPORTED:
        _param(est, param)
    loss_name, _ = _param(est, "loss", next(iter(est._SUPPORTED["loss"])))
    if targets is not None and targets.num_outputs == 1 and \
            loss_name == "squared-error-non-decomposable":
        warn("loss='squared-error-non-decomposable' with a single output: its Hessian (the "
             "Euclidean norm's) is 0, so every head is -gradient / l2_regularization_weight "
             "and the model fits poorly (as mlrl-boomer's); use "
             "'squared-error-decomposable' for one output", UserWarning)
    targets = targets or TargetLayout(sparse=False, num_outputs=2)
    statistics = predictors.resolve_statistics_format(
        _param(est, "statistic_format")[0], _param(est, "default_rule")[0], loss_name,
        parse("head_type", est.head_type or "auto")[0], targets.sparse, targets.num_outputs)
    induction_name, induction = _param(est, "rule_induction")
    fs_name, fs = _param(est, "feature_sampling")
    max_rules = check_number("max_rules", 1000 if est.max_rules is None else est.max_rules,
                             low=0, high=MAX_RULES_LIMIT, integer=True)
    time_limit = check_number("time_limit", 0 if est.time_limit is None else est.time_limit,
                              low=0)
    shrinkage = check_number("shrinkage", 0.3 if est.shrinkage is None else est.shrinkage,
                             low=0, high=1, low_open=True)
    l1 = check_number("l1_regularization_weight", est.l1_regularization_weight or 0.0, low=0)
    l2 = check_number("l2_regularization_weight",
                      1.0 if est.l2_regularization_weight is None else
                      est.l2_regularization_weight, low=0)
    check_number("rule_induction min_coverage", induction["min_coverage"], low=1, integer=True)
    check_number("rule_induction max_conditions", induction["max_conditions"], low=0,
                 integer=True)
    if not 0 <= check_number("rule_induction min_support", induction["min_support"]) < 1:
        raise ValueError(f"rule_induction min_support must be in [0, 1), got "
                         f"{induction['min_support']!r}")
    if induction_name == "top-down-beam-search":
        check_number("rule_induction beam_width", induction["beam_width"], low=2, integer=True)
    check_number("feature_sampling sample_size", fs.get("sample_size", 0.0), low=0, high=1)
    check_feature_sampling(fs_name, fs)
    check_number("rule_induction max_head_refinements", induction["max_head_refinements"],
                 low=0, integer=True)
    head_mode, head_params, head_type = _head(est, loss_name, l1, l2, head_type_rule,
                                              statistics, targets.num_outputs)
    pruning = resolve_pruning(est)
    instance_sampling = resolve_sampling(est, "instance_sampling", InstanceSampling)
    config = BoostingConfig(
        loss=losses[loss_name],
        head_mode=head_mode,
        head_params=head_params,
        max_rules=max_rules,
        time_limit=time_limit,
        shrinkage=shrinkage,
        l1=l1,
        l2=l2,
        default_rule=statistics.default_rule,
        partial_default_rule=(statistics.default_rule and statistics.sparse and
                              head_type != "complete"),
        feature_sampling=FeatureSampling(
            enabled=fs_name != "none", sample_size=fs.get("sample_size", 0.0),
            min_samples=fs.get("min_samples", 1), max_samples=fs.get("max_samples", 0)),
        instance_sampling=instance_sampling,
        output_sampling=resolve_sampling(est, "output_sampling", OutputSampling),
        max_conditions=induction["max_conditions"],
        min_coverage=induction["min_coverage"],
        min_support=float(induction["min_support"]),
        beam_width=induction.get("beam_width", 0),  # the greedy search has none: 0
        resample_features=induction.get("resample_features", False),
        max_head_refinements=induction["max_head_refinements"],
        recalculate_predictions=induction["recalculate_predictions"],
        holdout=resolve_holdout(est, pruning, calibrations()),
        pruning=pruning,
        irep=resolve_irep(est, instance_sampling),
        post_optimization=resolve_post_optimization(est),
        statistic_bits=STATISTIC_BITS[_param(est, "statistic_type", "32-bit")[0]],
    )
    threads = {
        "search": num_threads("parallel_rule_refinement", est.parallel_rule_refinement),
        "update": num_threads("parallel_statistic_update", est.parallel_statistic_update),
        "predict": num_threads("parallel_prediction", est.parallel_prediction),
    }
    return config, threads


# -- BoomerRegressor ------------------------------------------------------------------------
# partial-fixed output_ratio=0 of a regressor: mlrl-boomer's fixed 0.33
# (``calculateOutputRatio`` of a regression matrix)
REGRESSION_OUTPUT_RATIO = float(np.float32(0.33))


def regression_head_type(head_type, loss_name, sparse_statistics=False, num_outputs=2):
    """``auto`` -> ``complete`` for both regression losses (mlrl-boomer 0.15.6's regressor:
    the same model as ``head_type='complete'``; no regression loss has sparse
    statistics); other values pass through."""
    del loss_name, sparse_statistics, num_outputs
    return "complete" if head_type == "auto" else head_type


def resolve_regressor_config(est, targets=None):
    """Validate a ``BoomerRegressor``'s parameters (``REGRESSOR_SUPPORTED``). Returns
    (BoostingConfig, threads dict); its loss is the spec of ``REGRESSION_LOSSES`` (without
    the fit's target bound, ``objectives.losses.regression``). ``targets``: as for
    :func:`_resolve_config`."""
    config, threads = _resolve_config(est, REGRESSION_LOSSES, regression_head_type,
                                      lambda: (), targets)
    return with_output_ratio(config, lambda: REGRESSION_OUTPUT_RATIO), threads

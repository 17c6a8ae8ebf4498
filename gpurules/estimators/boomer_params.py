"""BOOMER's parameters: supported values (mlrl-boomer 0.15 strings) and their resolution.

``resolve_config`` turns the estimator's constructor arguments into a ``BoostingConfig``
plus thread counts, raising ``ValueError`` for anything unsupported.
"""

import os

from gpurules.estimators.options import check_number, parse_option_value
from gpurules.learners.boosting import BoostingConfig
from gpurules.learners.sampling import FeatureSampling, InstanceSampling
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES

# name -> {option: default}; the first name is the effective default.
SUPPORTED = {
    "loss": {name: {} for name in DECOMPOSABLE_LOSSES},
    "head_type": {"auto": {}, "single": {}, "complete": {}},
    "default_rule": {"auto": {}, "true": {}, "false": {}},
    "rule_induction": {"top-down-greedy": {
        "max_conditions": 0, "min_coverage": 1, "min_support": 0.0,
        "max_head_refinements": 1, "recalculate_predictions": True}},
    "feature_sampling": {
        "without-replacement": {"sample_size": 0.0, "min_samples": 1, "max_samples": 0,
                                "num_retained": 0},
        "none": {}},
    "instance_sampling": {
        "none": {},
        "with-replacement": {"sample_size": 1.0},
        "without-replacement": {"sample_size": 0.66}},
    "feature_format": {"auto": {}, "dense": {}, "sparse": {}},
    "output_format": {"auto": {}, "dense": {}, "sparse": {}},
    "prediction_format": {"auto": {}, "dense": {}, "sparse": {}},
    "statistic_format": {"auto": {}, "dense": {}},
    "statistic_type": {"float64": {}, "float32": {}},
    "global_pruning": {"none": {}},
    "post_optimization": {"none": {}},
    "marginal_probability_calibration": {"none": {}},
    "joint_probability_calibration": {"none": {}},
    "binary_predictor": {"auto": {}, "output-wise": {"based_on_probabilities": False}},
    "probability_predictor": {"auto": {}, "output-wise": {}},
    "output_sampling": {"none": {}},
    "holdout": {"auto": {}, "none": {}},
    "feature_binning": {
        "auto": {}, "none": {},
        "equal-width": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0},
        "equal-frequency": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0}},
    "label_binning": {"auto": {}, "none": {}},
    "rule_pruning": {"none": {}},
}

PARALLEL = {"auto": {}, "true": {"num_preferred_threads": 0}, "false": {}}


def parse(param, value):
    return parse_option_value(param, value, SUPPORTED[param])


def num_threads(param, value):
    """Threads for one parallelisable phase: 1 for 'false', all cores for 'auto'/'true'."""
    name, opts = parse_option_value(param, value, PARALLEL)
    if name == "false":
        return 1
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    preferred = opts.get("num_preferred_threads", 0)
    return max(1, min(preferred, available)) if preferred > 0 else available


def _head_mode(head_type, loss_name):
    if head_type == "single":
        return HEAD_SINGLE
    if head_type == "complete":
        return HEAD_COMPLETE
    # mlrl-boomer's 'auto': complete heads for the decomposable logistic loss, single
    # heads for the other decomposable losses.
    return HEAD_COMPLETE if loss_name == "logistic-decomposable" else HEAD_SINGLE


def resolve_config(est):
    """Validate the estimator's parameters. Returns (BoostingConfig, threads dict)."""
    for param in SUPPORTED:
        parse(param, getattr(est, param))
    loss_name, _ = parse("loss", est.loss or "logistic-decomposable")
    head_type, _ = parse("head_type", est.head_type)
    default_rule, _ = parse("default_rule", est.default_rule)
    _, induction = parse("rule_induction", est.rule_induction)
    fs_name, fs = parse("feature_sampling", est.feature_sampling)
    is_name, inst = parse("instance_sampling", est.instance_sampling)
    max_rules = check_number("max_rules", 1000 if est.max_rules is None else est.max_rules,
                             low=0, integer=True)
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
    check_number("feature_sampling sample_size", fs.get("sample_size", 0.0), low=0, high=1)
    if is_name != "none":
        check_number("instance_sampling sample_size", inst["sample_size"], low=0, high=1,
                     low_open=True)
    config = BoostingConfig(
        loss=DECOMPOSABLE_LOSSES[loss_name],
        head_mode=_head_mode(head_type, loss_name),
        max_rules=max_rules,
        time_limit=time_limit,
        shrinkage=shrinkage,
        l1=l1,
        l2=l2,
        default_rule=default_rule != "false",
        feature_sampling=FeatureSampling(
            enabled=fs_name != "none", sample_size=fs.get("sample_size", 0.0),
            min_samples=fs.get("min_samples", 1), max_samples=fs.get("max_samples", 0)),
        instance_sampling=InstanceSampling(is_name, inst.get("sample_size", 1.0)),
        max_conditions=induction["max_conditions"],
        min_coverage=induction["min_coverage"],
        max_head_refinements=induction["max_head_refinements"],
        recalculate_predictions=induction["recalculate_predictions"],
    )
    threads = {
        "search": num_threads("parallel_rule_refinement", est.parallel_rule_refinement),
        "update": num_threads("parallel_statistic_update", est.parallel_statistic_update),
        "predict": num_threads("parallel_prediction", est.parallel_prediction),
    }
    return config, threads

"""SeCo's parameters: supported values (mlrl-seco 0.15 strings) and their resolution.

The first name of each parameter is its effective default, checked against the installed
mlrl-seco 0.15.6 (fitting it with and without each value gives the same model): f-measure
with beta 0.25, accuracy for pruning, single-label heads, peak lift, IREP, stratified
output-wise instance sampling of 66 %, no feature sampling, no binning, 500 rules.
``resolve_config`` turns an estimator's arguments into a ``CoveringConfig`` plus threads.
"""

import math

from gpurules.estimators.boomer_params import num_threads
from gpurules.estimators.options import (MAX_RULES_LIMIT, check_feature_sampling,
                                         check_number, check_sample_counts,
                                         parse_option_value)
from gpurules.learners.covering import CoveringConfig
from gpurules.learners.sampling import SECO_DRAWS, FeatureSampling, InstanceSampling
from gpurules.objectives.heuristics import (HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE,
                                            HEURISTIC_IDS, heuristic_parameter)
from gpurules.objectives.lift_functions import DEFAULTS as LIFT_DEFAULTS

_HEURISTICS = {
    "f-measure": {"beta": 0.25}, "accuracy": {}, "precision": {}, "recall": {},
    "laplace": {}, "weighted-relative-accuracy": {}, "m-estimate": {"m": 22.466},
}
_SAMPLE = {"sample_size": 0.66, "min_samples": 1, "max_samples": 0}

# name -> {option: default}; the first name is the effective default.
SUPPORTED = {
    "heuristic": _HEURISTICS,
    "pruning_heuristic": dict([("accuracy", {})] + [(k, v) for k, v in _HEURISTICS.items()
                                                     if k != "accuracy"]),
    "lift_function": {"peak": LIFT_DEFAULTS["peak"], "none": {}, "kln": LIFT_DEFAULTS["kln"]},
    "head_type": {"single": {}, "partial": {}},
    "rule_pruning": {"irep": {}, "none": {}},
    "rule_induction": {"top-down-greedy": {
        "max_conditions": 0, "min_coverage": 1, "min_support": 0.0,
        "max_head_refinements": 1, "recalculate_predictions": False}},
    "instance_sampling": {
        "stratified-output-wise": dict(_SAMPLE), "none": {},
        "with-replacement": dict(_SAMPLE), "without-replacement": dict(_SAMPLE),
        "stratified-example-wise": dict(_SAMPLE)},
    "feature_sampling": {
        "none": {},
        "without-replacement": {"sample_size": 0.0, "min_samples": 1, "max_samples": 0,
                                "num_retained": 0}},
    "feature_binning": {
        "none": {},
        "equal-width": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0},
        "equal-frequency": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0}},
    "feature_format": {"auto": {}, "dense": {}, "sparse": {}},
    "output_format": {"auto": {}, "dense": {}, "sparse": {}},
    "prediction_format": {"auto": {}, "dense": {}, "sparse": {}},
    "post_optimization": {"none": {}},
    "output_sampling": {"none": {}},
    "holdout": {"none": {}},
    "rule_set": {
        "decision-list": {},
        "unordered": {"num_trees": 50, "min_depth": 2, "max_depth": 8, "max_features": 0.0,
                      "sample_size": 1.0, "threshold": 0.0}},
}


def parse(param, value):
    return parse_option_value(param, value, SUPPORTED[param])


def _heuristic(param, value):
    name, options = parse(param, value)
    option = options.get("beta", options.get("m", 0.0))
    if name in ("f-measure", "m-estimate"):
        key = "beta" if name == "f-measure" else "m"
        if not (option >= 0 or math.isinf(option)) or math.isnan(option):
            raise ValueError(f"{param}={value!r}: {key} must be >= 0, got {option!r}")
    hid = HEURISTIC_IDS[name]
    return hid, heuristic_parameter(hid, option)


def _lift(value):
    name, options = parse("lift_function", value)
    if name == "peak":
        check_number("lift_function peak_label", options["peak_label"], low=0, integer=True)
        check_number("lift_function max_lift", options["max_lift"], low=1)
        check_number("lift_function curvature", options["curvature"], low=0, low_open=True)
    elif name == "kln":
        check_number("lift_function k", options["k"], low=0, low_open=True)
    return name, options


def _check_rule_set(value):
    """Validate the options of ``rule_set='unordered{...}'``."""
    name, options = parse("rule_set", value)
    if name != "unordered":
        return
    check_number("rule_set num_trees", options["num_trees"], low=1, integer=True)
    low = check_number("rule_set min_depth", options["min_depth"], low=1, integer=True)
    check_number("rule_set max_depth", options["max_depth"], low=low, integer=True)
    check_number("rule_set max_features", options["max_features"], low=0, high=1)
    check_number("rule_set sample_size", options["sample_size"], low=0, high=1,
                 low_open=True)
    check_number("rule_set threshold", options["threshold"])


def resolve_config(est, targets=None):
    """Validate the estimator's parameters. Returns (CoveringConfig, threads dict).
    ``targets`` (the label matrix's ``validation.TargetLayout``, as BOOMER's) changes
    nothing here."""
    del targets
    for param in SUPPORTED:
        parse(param, getattr(est, param))
    _check_rule_set(est.rule_set)
    _, induction = parse("rule_induction", est.rule_induction)
    if induction["recalculate_predictions"]:
        raise ValueError("rule_induction: recalculate_predictions=true does not apply to SeCo "
                         "rules (their heads are fixed values); use false")
    check_number("rule_induction min_coverage", induction["min_coverage"], low=1, integer=True)
    check_number("rule_induction max_conditions", induction["max_conditions"], low=0,
                 integer=True)
    check_number("rule_induction max_head_refinements", induction["max_head_refinements"],
                 low=0, integer=True)
    check_number("rule_induction min_support", induction["min_support"], low=0, high=1)
    max_rules = check_number("max_rules", 500 if est.max_rules is None else est.max_rules,
                             low=0, high=MAX_RULES_LIMIT, integer=True)
    time_limit = check_number("time_limit", est.time_limit or 0, low=0)
    is_name, inst = parse("instance_sampling", est.instance_sampling)
    if is_name != "none":
        check_number("instance_sampling sample_size", inst["sample_size"], low=0, high=1,
                     low_open=True)
        check_sample_counts("instance_sampling", is_name, inst)
    fs_name, fs = parse("feature_sampling", est.feature_sampling)
    check_number("feature_sampling sample_size", fs.get("sample_size", 0.0), low=0, high=1)
    check_feature_sampling(fs_name, fs)
    head_type, _ = parse("head_type", est.head_type)
    config = CoveringConfig(
        head_mode=HEAD_SECO_PARTIAL if head_type == "partial" else HEAD_SECO_SINGLE,
        heuristic=_heuristic("heuristic", est.heuristic),
        pruning_heuristic=_heuristic("pruning_heuristic", est.pruning_heuristic),
        lift_function=_lift(est.lift_function),
        max_rules=max_rules,
        time_limit=time_limit,
        min_coverage=induction["min_coverage"],
        min_support=induction["min_support"],
        max_conditions=induction["max_conditions"],
        max_head_refinements=induction["max_head_refinements"],
        irep=parse("rule_pruning", est.rule_pruning)[0] == "irep",
        instance_sampling=InstanceSampling(is_name, inst.get("sample_size", 0.66),
                                           inst.get("min_samples", 1),
                                           inst.get("max_samples", 0), SECO_DRAWS),
        feature_sampling=FeatureSampling(
            enabled=fs_name != "none", sample_size=fs.get("sample_size", 0.0),
            min_samples=fs.get("min_samples", 1), max_samples=fs.get("max_samples", 0)),
    )
    threads = {
        "search": num_threads("parallel_rule_refinement", est.parallel_rule_refinement),
        "update": num_threads("parallel_statistic_update", est.parallel_statistic_update),
        "predict": num_threads("parallel_prediction", est.parallel_prediction),
    }
    return config, threads

"""BOOMER's parameter tables: the values each string parameter of ``BoomerClassifier`` and
``BoomerRegressor`` supports (mlrl-boomer 0.15 strings) with the defaults of their options,
and the losses by name. ``boomer_params`` resolves the parameters against them.
"""

from gpurules.learners.sampling import INSTANCE_SAMPLING_KINDS
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES, REGRESSION_LOSSES
from gpurules.objectives.non_decomposable import NON_DECOMPOSABLE_LOSSES

LOSSES = {**DECOMPOSABLE_LOSSES, **NON_DECOMPOSABLE_LOSSES}

# name -> {option: default}; the first name is the effective default.
SUPPORTED = {
    "loss": {name: {} for name in LOSSES},
    "head_type": {"auto": {}, "single": {}, "complete": {},
                  "partial-fixed": {"output_ratio": 0.0, "min_outputs": 2, "max_outputs": 0},
                  "partial-dynamic": {"threshold": 0.02, "exponent": 2.0}},
    "default_rule": {"auto": {}, "true": {}, "false": {}},
    "rule_induction": {
        "top-down-greedy": {"max_conditions": 0, "min_coverage": 1, "min_support": 0.0,
                            "max_head_refinements": 1, "recalculate_predictions": True},
        "top-down-beam-search": {"beam_width": 4, "resample_features": False,
                                 "max_conditions": 0, "min_coverage": 1, "min_support": 0.0,
                                 "max_head_refinements": 1, "recalculate_predictions": True}},
    "feature_sampling": {
        "without-replacement": {"sample_size": 0.0, "min_samples": 1, "max_samples": 0,
                                "num_retained": 0},
        "none": {}},
    "instance_sampling": {
        "none": {},
        **{kind: {"sample_size": 0.66, "min_samples": 1, "max_samples": 0}
           for kind in INSTANCE_SAMPLING_KINDS[1:]}},
    "feature_format": {"auto": {}, "dense": {}, "sparse": {}},
    "output_format": {"auto": {}, "dense": {}, "sparse": {}},
    "prediction_format": {"auto": {}, "dense": {}, "sparse": {}},
    # "sparse": mlrl-boomer's rules for heads and the default rule (our statistics hold the
    # same sums either way; predictors.resolve_statistics_format)
    "statistic_format": {"auto": {}, "dense": {}, "sparse": {}},
    # "32-bit" (the default, as mlrl-boomer's) / "64-bit", also mlrl-boomer's float names: how
    # fine the statistics' fixed-point scale may be (objectives.fixed_point)
    "statistic_type": {"float64": {}, "float32": {}, "64-bit": {}, "32-bit": {}},
    "global_pruning": {
        "none": {},
        "pre-pruning": {"use_holdout_set": True, "remove_unused_rules": True,
                        "min_rules": 100, "update_interval": 1, "stop_interval": 1,
                        "num_past": 50, "num_recent": 50, "min_improvement": 0.005,
                        "aggregation": "avg"},
        "post-pruning": {"use_holdout_set": True, "remove_unused_rules": True,
                         "min_rules": 100, "interval": 1}},
    "post_optimization": {"none": {},
                          "sequential": {"num_iterations": 2, "refine_heads": False,
                                         "resample_features": True}},
    "marginal_probability_calibration": {"none": {}, "isotonic": {"use_holdout_set": True}},
    "joint_probability_calibration": {"none": {}, "isotonic": {"use_holdout_set": True}},
    "binary_predictor": {"auto": {},
                         "output-wise": {"based_on_probabilities": False,
                                         "use_probability_calibration": True},
                         "example-wise": {"based_on_probabilities": False,
                                          "use_probability_calibration": True},
                         "gfm": {"use_probability_calibration": True}},
    "probability_predictor": {"auto": {}, "output-wise": {"use_probability_calibration": True},
                              "marginalized": {"use_probability_calibration": True}},
    "output_sampling": {
        "none": {}, "round-robin": {},
        "without-replacement": {"sample_size": 0.33, "min_samples": 1, "max_samples": 1}},
    "holdout": {"auto": {}, "none": {},
                "random": {"holdout_set_size": 0.33},
                "stratified-output-wise": {"holdout_set_size": 0.33},
                "stratified-example-wise": {"holdout_set_size": 0.33}},
    "feature_binning": {
        "auto": {}, "none": {},
        "equal-width": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0},
        "equal-frequency": {"bin_ratio": 0.33, "min_bins": 2, "max_bins": 0}},
    "label_binning": {"auto": {}, "none": {},
                      "equal-width": {"bin_ratio": 0.04, "min_bins": 1, "max_bins": 0}},
    "rule_pruning": {"none": {}, "irep": {}},
}

PARALLEL = {"auto": {}, "true": {"num_preferred_threads": 0}, "false": {}}


# -- BoomerRegressor ------------------------------------------------------------------------
# the classifier's parameters that mlrl-boomer 0.15.6's BoomerRegressor does not have
CLASSIFICATION_ONLY = ("label_binning", "marginal_probability_calibration",
                       "joint_probability_calibration", "binary_predictor",
                       "probability_predictor")
# mlrl-boomer's regressor has no stratified holdout or instance sampling (no labels)
_STRATIFIED = ("stratified-output-wise", "stratified-example-wise")
REGRESSOR_SUPPORTED = {
    param: {name: options for name, options in values.items() if name not in _STRATIFIED}
    for param, values in SUPPORTED.items() if param not in CLASSIFICATION_ONLY}
REGRESSOR_SUPPORTED["loss"] = {name: {} for name in REGRESSION_LOSSES}

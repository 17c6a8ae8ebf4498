"""Audit of BoomerClassifier's parameters against mlrl-boomer 0.15.6's BoomerClassifier.

``MLRL_BOOMER_PARAMETERS`` is what mlrl-boomer accepts: per constructor parameter, None for
a parameter without a fixed set of values (numbers, the seed, the formats mlrl-boomer
checks in Python), else {value: its options}. ``benchmarks/mlrl_parameter_table.py``
regenerates it from an installed mlrl-boomer. Every value and option there must be accepted
by gpurules (``statistic_format="sparse"`` was the last value missing). Runs without
mlrl-boomer.
"""

import inspect

import pytest

from gpurules import BoomerClassifier
from gpurules.estimators.boomer_tables import PARALLEL, SUPPORTED
from gpurules.estimators.options import parse_option_value

MLRL_BOOMER_PARAMETERS = {'random_state': None,
 'feature_format': None,
 'output_format': None,
 'prediction_format': None,
 'statistic_format': {'auto': [], 'dense': [], 'sparse': []},
 'statistic_type': {'32-bit': [], '64-bit': []},
 'default_rule': {'auto': [], 'false': [], 'true': []},
 'rule_induction': {'top-down-beam-search': ['beam_width',
                                             'max_conditions',
                                             'max_head_refinements',
                                             'min_coverage',
                                             'min_support',
                                             'recalculate_predictions',
                                             'resample_features'],
                    'top-down-greedy': ['max_conditions',
                                        'max_head_refinements',
                                        'min_coverage',
                                        'min_support',
                                        'recalculate_predictions']},
 'max_rules': None,
 'time_limit': None,
 'global_pruning': {'none': [],
                    'post-pruning': ['interval',
                                     'min_rules',
                                     'remove_unused_rules',
                                     'use_holdout_set'],
                    'pre-pruning': ['aggregation',
                                    'min_improvement',
                                    'min_rules',
                                    'num_past',
                                    'num_recent',
                                    'remove_unused_rules',
                                    'stop_interval',
                                    'update_interval',
                                    'use_holdout_set']},
 'post_optimization': {'none': [],
                       'sequential': ['num_iterations', 'refine_heads', 'resample_features']},
 'head_type': {'auto': [],
               'complete': [],
               'partial-dynamic': ['exponent', 'threshold'],
               'partial-fixed': ['max_outputs', 'min_outputs', 'output_ratio'],
               'single': []},
 'loss': {'logistic-decomposable': [],
          'logistic-non-decomposable': [],
          'squared-error-decomposable': [],
          'squared-error-non-decomposable': [],
          'squared-hinge-decomposable': [],
          'squared-hinge-non-decomposable': []},
 'marginal_probability_calibration': {'isotonic': ['use_holdout_set'], 'none': []},
 'joint_probability_calibration': {'isotonic': ['use_holdout_set'], 'none': []},
 'binary_predictor': {'auto': [],
                      'example-wise': ['based_on_probabilities', 'use_probability_calibration'],
                      'gfm': ['use_probability_calibration'],
                      'output-wise': ['based_on_probabilities', 'use_probability_calibration']},
 'probability_predictor': {'auto': [],
                           'marginalized': ['use_probability_calibration'],
                           'output-wise': ['use_probability_calibration']},
 'output_sampling': {'none': [],
                     'round-robin': [],
                     'without-replacement': ['max_samples', 'min_samples', 'sample_size']},
 'instance_sampling': {'none': [],
                       'stratified-example-wise': ['max_samples', 'min_samples', 'sample_size'],
                       'stratified-output-wise': ['max_samples', 'min_samples', 'sample_size'],
                       'with-replacement': ['max_samples', 'min_samples', 'sample_size'],
                       'without-replacement': ['max_samples', 'min_samples', 'sample_size']},
 'feature_sampling': {'none': [],
                      'without-replacement': ['max_samples',
                                              'min_samples',
                                              'num_retained',
                                              'sample_size']},
 'holdout': {'none': [],
             'random': ['holdout_set_size'],
             'stratified-example-wise': ['holdout_set_size'],
             'stratified-output-wise': ['holdout_set_size']},
 'feature_binning': {'equal-frequency': ['bin_ratio', 'max_bins', 'min_bins'],
                     'equal-width': ['bin_ratio', 'max_bins', 'min_bins'],
                     'none': []},
 'label_binning': {'auto': [],
                   'equal-width': ['bin_ratio', 'max_bins', 'min_bins'],
                   'none': []},
 'rule_pruning': {'irep': [], 'none': []},
 'shrinkage': None,
 'l1_regularization_weight': None,
 'l2_regularization_weight': None,
 'parallel_rule_refinement': {'false': [], 'true': ['num_preferred_threads']},
 'parallel_statistic_update': {'false': [], 'true': ['num_preferred_threads']},
 'parallel_prediction': {'false': [], 'true': ['num_preferred_threads']}}

def ours(param):
    """gpurules' {value: {option: default}} of ``param``."""
    return PARALLEL if param.startswith("parallel_") else SUPPORTED[param]


def accepted(param, value, option=None):
    """Whether gpurules' parser accepts ``value`` (and declares ``option`` for it)."""
    try:
        _, options = parse_option_value(param, value, ours(param))
    except ValueError:
        return False
    return option is None or option in options


def audit_entries():
    for param, values in MLRL_BOOMER_PARAMETERS.items():
        for value, options in (values or {}).items():
            yield param, value, None
            for option in options:
                yield param, value, option


def test_every_mlrl_boomer_parameter_is_a_parameter_of_ours():
    names = set(inspect.signature(BoomerClassifier.__init__).parameters) - {"self"}
    assert set(MLRL_BOOMER_PARAMETERS) <= names, set(MLRL_BOOMER_PARAMETERS) - names


@pytest.mark.parametrize("param, value, option", list(audit_entries()))
def test_value_is_supported(param, value, option):
    key = (param, value) if option is None else (param, value, option)
    assert accepted(param, value, option), f"{key} is accepted by mlrl-boomer: support it"

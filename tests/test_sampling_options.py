"""Instance and output sampling of BOOMER (mlrl-boomer's ``instance_sampling`` and
``output_sampling``): sample sizes, per-stratum counts, round-robin order, the outputs a
head may predict, exact vs histogram search."""

import numba
import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.backends import instance_draws
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.holdout import Holdout, example_wise_strata, output_wise_strata
from gpurules.learners.sampling import InstanceSampling, OutputSampling, bounded_fraction
from tests.test_boomer import assert_same_model


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=150, n_features=6, n_classes=5,
                                          random_state=4)
    return X.astype(np.float32), Y.astype(np.uint8)  # integer features: few distinct values


def fit(X, Y, **params):
    params = {"max_rules": 12, "device": "cpu", **params}
    return BoomerClassifier(**params).fit(X, Y)


@pytest.mark.parametrize("n, fraction, minimum, maximum, expected", [
    (18, 0.66, 1, 0, 12),     # ceil(11.88)
    (1500, 0.66, 1, 0, 991),  # float32: 0.66f * 1500 = 990.00006
    (6, 0.33, 1, 1, 1),       # output sampling's defaults: one output
    (6, 0.33, 3, 0, 3),       # min_samples
    (2, 0.1, 5, 0, 2),        # min_samples capped at n
    (100, 0.66, 1, 10, 10),   # max_samples
])
def test_bounded_fraction(n, fraction, minimum, maximum, expected):
    assert bounded_fraction(n, fraction, minimum, maximum) == expected


def test_stratum_counts_hand_worked():
    """Strata 3, 5, 10; 0.66: 12 drawn, 6 left out wanted. 1.98 -> 2 (12 > 6 wanted),
    3.3 -> 4 (10 > 5), 6.6 -> 7 (6 > 4): mlrl-boomer's counts, 13 in all."""
    strata = [np.arange(3), np.arange(3, 8), np.arange(8, 18)]

    def counts(max_samples):
        sampling = InstanceSampling("stratified-output-wise", 0.66, 1, max_samples)
        weights = sampling.sample(np.random.default_rng(0), 18, strata)
        return [int(weights[s].sum()) for s in strata]

    assert counts(0) == [2, 4, 7]
    # fewer to draw than to leave out: round down; max_samples=2 only steers the rounding
    assert counts(2) == [1, 3, 6]


@pytest.mark.parametrize("seed", range(4))
def test_stratified_draws_are_numpys(data, seed):
    """The compiled BOOMER draw (``sampling._stratified_sample``) takes numpy's draws: every
    stratum's count (coin flips included), then ``rng.permutation`` of each stratum, the
    first ``count`` of it drawn; the weights and the generator's state after it are those
    of the same steps in Python."""
    _, Y = data
    sampling = InstanceSampling("stratified-output-wise", 0.5, 1, 40 + seed)
    strata = sampling.strata(Y)
    got_rng, want_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        got = sampling.sample(got_rng, Y.shape[0], strata)
        want = np.zeros(Y.shape[0], np.int32)
        counts = reference_counts(want_rng, [len(s) for s in strata], 0.5, 40 + seed)
        for stratum, take in zip(strata, counts):
            want[stratum[want_rng.permutation(len(stratum))[:take]]] = 1
        np.testing.assert_array_equal(got, want)
    assert got_rng.random() == want_rng.random()


def reference_counts(rng, sizes, sample_size, total):
    """Slow restatement of mlrl-boomer's sampleWeightsInternally with signed counters."""
    counts = []
    for size in sizes:
        want_in = total - sum(counts)
        want_out = sum(sizes) - total - sum(s - c for s, c in zip(sizes, counts))
        want_in, want_out = max(want_in, 0), max(want_out, 0)
        x = float(np.float32(sample_size) * np.float32(size))
        up = want_in > want_out if want_in != want_out else rng.random() < 0.5
        counts.append(int(np.ceil(x)) if up else int(np.floor(x)))
    return counts


@pytest.mark.parametrize("kind", ["stratified-output-wise", "stratified-example-wise"])
@pytest.mark.parametrize("size, minimum, maximum", [(0.66, 1, 0), (0.3, 1, 0), (0.5, 1, 20)])
def test_stratified_sample_per_stratum(data, kind, size, minimum, maximum):
    _, Y = data
    sampling = InstanceSampling(kind, size, minimum, maximum)
    strata = sampling.strata(Y)
    expected_strata = output_wise_strata(Y) if kind == "stratified-output-wise" else \
        example_wise_strata(Y)
    assert [list(s) for s in strata] == [list(s) for s in expected_strata]
    total = bounded_fraction(Y.shape[0], size, minimum, maximum)
    weights = sampling.sample(np.random.default_rng(7), Y.shape[0], strata)
    assert weights.dtype == np.int32 and set(np.unique(weights)) <= {0, 1}
    expected = reference_counts(np.random.default_rng(7), [len(s) for s in strata], size, total)
    assert [int(weights[s].sum()) for s in strata] == expected


@pytest.mark.parametrize("kind, size, minimum, maximum, expected", [
    ("with-replacement", 0.66, 1, 0, 100), ("with-replacement", 1.0, 1, 20, 20),
    ("without-replacement", 0.66, 1, 0, 100), ("without-replacement", 0.01, 7, 0, 7)])
def test_unstratified_sample_sizes(kind, size, minimum, maximum, expected):
    """(0.66f * 150 = 99.00001 in float32: 100 examples, as mlrl-boomer.)"""
    weights = InstanceSampling(kind, size, minimum, maximum).sample(
        np.random.default_rng(3), 150)
    assert weights.sum() == expected
    if kind == "without-replacement":
        assert weights.max() == 1


def test_defaults_are_mlrl_boomers():
    """mlrl-boomer 0.15.6's config getters: every instance sampling 0.66/1/0, output
    sampling without-replacement 0.33/1/1."""
    for kind in ["with-replacement", "without-replacement", "stratified-output-wise",
                 "stratified-example-wise"]:
        config, _ = resolve_config(BoomerClassifier(instance_sampling=kind))
        assert config.instance_sampling == InstanceSampling(kind, 0.66, 1, 0)
    config, _ = resolve_config(BoomerClassifier(output_sampling="without-replacement"))
    assert config.output_sampling == OutputSampling("without-replacement", 0.33, 1, 1)


@pytest.mark.parametrize("param, value, message", [
    ("instance_sampling", "stratified-output-wise{sample_size=1}", "must be < 1"),
    ("instance_sampling", "without-replacement{sample_size=0}", "must be > 0"),
    ("instance_sampling", "with-replacement{min_samples=0}", "must be >= 1"),
    ("instance_sampling", "with-replacement{min_samples=5,max_samples=3}", "max_samples=3"),
    ("output_sampling", "without-replacement{max_samples=0,min_samples=2,sample_size=1.5}",
     "must be <= 1"),
    ("output_sampling", "random", "supported values: 'none', 'round-robin', "
                                  "'without-replacement'"),
    ("feature_sampling", "without-replacement{min_samples=0}", "must be >= 1"),
    ("feature_sampling", "without-replacement{max_samples=-1}", "must be >= 0"),
    ("feature_sampling", "without-replacement{min_samples=3,max_samples=2}",
     "max_samples=2 must be 0"),
    ("feature_sampling", "without-replacement{num_retained=2}", "num_retained=2 is not"),
    ("head_type", "partial-fixed{min_outputs=3,max_outputs=2}", "max_outputs=2 must be 0"),
    ("head_type", "partial-dynamic{threshold=0.1,threshold=0.9}", "'threshold' is given twice"),
    ("rule_induction", "top-down-greedy{max_head_refinements=-5}", "must be >= 0"),
    ("max_rules", 2 ** 64, "must be <= 2147483647"),
])
def test_bad_values_raise(param, value, message):
    with pytest.raises(ValueError, match=message):
        resolve_config(BoomerClassifier(**{param: value}))


def test_round_robin_order():
    sampling = OutputSampling("round-robin")
    rng = np.random.default_rng(0)
    assert [sampling.sample(rng, 3, i).tolist() for i in range(7)] == \
        [[0], [1], [2], [0], [1], [2], [0]]


def test_output_sample_without_replacement():
    sampling = OutputSampling("without-replacement", 0.5, 1, 0)
    draws = [sampling.sample(np.random.default_rng(s), 7, 0) for s in range(200)]
    assert all(d.dtype == np.int32 and len(set(d)) == 4 and list(d) == sorted(d)
               for d in draws)
    counts = np.bincount(np.concatenate(draws), minlength=7)
    assert counts.min() > 0.7 * counts.mean()  # roughly uniform


@pytest.mark.parametrize("head_type, loss", [
    ("single", "logistic-decomposable"), ("complete", "logistic-decomposable"),
    ("complete", "logistic-non-decomposable"), ("partial-fixed", "logistic-decomposable")])
def test_round_robin_heads_predict_their_output(data, head_type, loss):
    X, Y = data
    model = fit(X, Y, output_sampling="round-robin", head_type=head_type, loss=loss).model_
    K = Y.shape[1]
    for i in range(len(model) - 1):
        labels = model.head_label[model.rule_head_start[i]:model.rule_head_start[i + 1]]
        assert labels.tolist() == [i % K]


@pytest.mark.parametrize("head_type", ["single", "complete", "partial-dynamic"])
def test_heads_stay_within_sampled_outputs(data, head_type):
    """With two of five outputs drawn per rule, no head predicts more than two, and a
    complete head predicts exactly the two drawn."""
    X, Y = data
    model = fit(X, Y, output_sampling="without-replacement{sample_size=0.4,max_samples=0}",
                head_type=head_type, label_binning="none").model_
    sizes = np.diff(model.rule_head_start)
    assert sizes.max() <= 2
    if head_type == "complete":
        assert (sizes == 2).all()


@pytest.mark.parametrize("params", [
    {"output_sampling": "round-robin"},
    {"output_sampling": "without-replacement{max_samples=2}",
     "loss": "logistic-non-decomposable"},
    {"output_sampling": "without-replacement{sample_size=0.5,max_samples=0}",
     "head_type": "partial-fixed"}])
def test_exact_and_histogram_search_give_the_same_model(data, params):
    """With one bin per distinct value (equal-frequency, integer features, every row twice
    so each value fills a bin) the histogram search sees the exact search's candidate
    conditions: the same rules up to the thresholds (the exact search puts them midway
    between covered values, the histogram search between non-empty bins of all examples),
    so the same scores on the training data. (Not so under instance sampling: a value
    whose rows are all left out lies between two thresholds that cover it differently.)"""
    X, Y = (np.repeat(a, 2, axis=0) for a in data)
    exact = fit(X, Y, feature_binning="none", **params)
    binned = fit(X, Y, feature_binning="equal-frequency{bin_ratio=0.9}", **params)
    a, b = exact.model_, binned.model_
    for name in ["default_scores", "cond_feature", "cond_op", "rule_cond_start", "head_label",
                 "head_score", "rule_head_start"]:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(exact.decision_function(X), binned.decision_function(X))


@pytest.mark.parametrize("kind", ["stratified-output-wise", "stratified-example-wise"])
def test_stratified_sampling_with_holdout_draws_training_examples_only(data, kind):
    """Held-out labels change neither the strata nor the rules (random holdout split)."""
    X, Y = data
    params = dict(holdout="random{holdout_set_size=0.4}", instance_sampling=kind)
    holdout = Holdout("random", 0.4).split(np.random.default_rng(1), Y)
    flipped = Y.copy()
    flipped[holdout] = 1 - flipped[holdout]
    assert_same_model(fit(X, Y, **params).model_, fit(X, flipped, **params).model_)


@pytest.mark.parametrize("n", [1, 2, 7, 1_000, 70_000])
def test_compiled_shuffle_takes_numpys_draws(n):
    """``instance_draws._shuffle`` (the stratified draw's permutation of a stratum) puts
    ``arange(n)`` in the order of ``rng.shuffle`` and leaves the generator where it does."""
    shuffle = numba.njit(lambda rng, x: instance_draws._shuffle(rng, x))
    for seed in range(3):
        got_rng, want_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        got, want = np.arange(n), np.arange(n)
        shuffle(got_rng, got)
        want_rng.shuffle(want)
        np.testing.assert_array_equal(got, want)
        assert got_rng.random() == want_rng.random()


def test_one_caller_compiled_for_every_kind_of_draw():
    """The kinds of ``instance_draws.DRAWS`` are one first-class function type
    (``DRAW_SIGNATURE``): a compiled caller of all three is compiled once, and each draws
    its sample (40 draws with replacement; 40 examples without; 40 % of each stratum)."""
    @numba.njit
    def call(draw, rng, num_samples, sample_size, members, offsets, weights):
        draw(rng, num_samples, sample_size, members, offsets, weights)

    members, offsets = np.arange(100, dtype=np.int64), np.array([0, 50, 100], np.int64)
    rng = np.random.default_rng(0)
    for kind, drawn in [(instance_draws.SAMPLE_WITH_REPLACEMENT, 40),
                        (instance_draws.SAMPLE_WITHOUT_REPLACEMENT, 40),
                        (instance_draws.SAMPLE_STRATIFIED, 40)]:
        weights = np.full(100, 7, np.int32)
        call(instance_draws.DRAWS[kind], rng, 40, 0.4, members, offsets, weights)
        assert weights.sum() == drawn and weights.min() == 0
    assert len(call.signatures) == 1
    assert call.signatures[0][0] == numba.types.FunctionType(instance_draws.DRAW_SIGNATURE)


@pytest.mark.parametrize("n, m", [(1, 1), (5, 5), (160, 106), (1123, 742), (10_000, 6_600),
                                  (10_001, 200), (10_001, 201), (20_000, 13_200)])
def test_compiled_choice_without_replacement_takes_numpys_draws(n, m):
    """``instance_draws.choice_without_replacement`` compiled draws the examples of
    ``rng.choice(n, m, replace=False)`` with numpy's draws, on both sides of numpy's switch
    from Floyd's algorithm to shuffling a tail (n > 10,000 and m > n // 50): the same
    examples and the generator's state after them."""
    draw = numba.njit(lambda rng, n, m, weights:
                      instance_draws.choice_without_replacement(rng, n, m, weights))
    for seed in range(3):
        got_rng, want_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        got = np.zeros(n, np.int32)
        draw(got_rng, n, m, got)
        want = np.zeros(n, np.int32)
        want[want_rng.choice(n, size=m, replace=False)] = 1
        np.testing.assert_array_equal(got, want)
        assert got_rng.random() == want_rng.random()

"""Fuzzing the input boundary (issue 13): random shapes, dtypes, NaN/inf placements,
nominal index lists, dense/sparse/DataFrame inputs and parameter strings from the supported
grammar and near it. Every draw either fits within a time bound, with predictions
consistent with the scores, or raises ValueError/TypeError; never another exception, a
hang or a crash. ``load_arff`` gets mutated files and must answer with a ValueError naming
the file, or a data set.

Time bounds: a configuration's first fit compiles Numba kernels (minutes on a cold cache),
so each new configuration is fitted once on fixed data before its draw is timed. A fit that
hangs inside compiled code cannot be interrupted from Python: ``faulthandler`` then dumps
the stacks and ends the test process (CI fails loudly instead of hanging).
"""

import faulthandler
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.datasets import load_arff

FIT_SECONDS = 20.0  # one warm fit of a few dozen examples; a hang, not a slow fit
HARD_SECONDS = 600  # faulthandler's guard around one draw (cold compiles included): the
# stacks go to stderr and the test process ends, so CI fails instead of hanging
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# parameter: (values from the supported grammar, values near it that must be refused)
BOOMER_GRAMMAR = {
    "feature_binning": (["none", "equal-width", "equal-frequency{bin_ratio=0.5}",
                         "equal-width{max_bins=3,min_bins=2}", None],
                        ["equal-width{bin_ratio=2}", "equal-width{bins=3}", "histogram"]),
    "feature_format": (["auto", "dense", "sparse", None], ["csc"]),
    "head_type": (["single", "complete", "partial-fixed", "partial-dynamic", None],
                  ["singel"]),
    "loss": (["logistic-decomposable", "logistic-non-decomposable",
              "squared-error-decomposable", "squared-hinge-decomposable", None], ["hinge"]),
    "instance_sampling": (["none", "with-replacement{sample_size=0.5}", None],
                          ["without-replacement{sample_size=0.0}"]),
    "feature_sampling": (["none", "without-replacement{sample_size=0.5}", None],
                         ["without-replacement{sample_size=2}"]),
    "rule_induction": (["top-down-greedy{max_conditions=2}",
                        "top-down-greedy{min_coverage=1000}", None],
                       ["top-down-greedy{max_conditions=-1}",
                        "top-down-greedy{min_coverage=0}"]),
    "label_binning": (["none", "equal-width", None], ["equal-width{bin_ratio=0}"]),
    "shrinkage": ([0.3, 1.0], [0.0, -0.1, float("nan"), float("inf"), "0.3"]),
    "l2_regularization_weight": ([None, 0.0, 1.0], [-1.0, float("nan")]),
    "max_rules": ([1, 3, 8], [-1, 2.5]),
}
SECO_GRAMMAR = {
    "feature_binning": (["none", "equal-width", "equal-frequency", None],
                        ["equal-width{x=1}"]),
    "feature_format": (["auto", "dense", "sparse", None], ["coo"]),
    "head_type": (["single", "partial", None], ["complete"]),
    "heuristic": (["precision", "laplace", "f-measure{beta=0.5}", "wra", None],
                  ["m-estimate{m=-1}"]),
    "lift_function": (["none", "peak", None], ["kln{k=0}"]),
    "rule_set": (["decision-list", "unordered{num_trees=3,max_depth=3}", None],
                 ["unordered{num_trees=0}"]),
    "max_rules": ([0, 1, 5, None], [-2]),
}
TURS_GRAMMAR = {
    "beam_width": ([1, 3], [0]),
    "n_cut_points": ([1, 4], [0]),
    "max_rules": ([0, 3, 8], [-1]),
    "literal_count_code": (["uniform", "universal"], ["other"]),
    "cut_point_method": (["sorted-ranks", "quantiles"], ["other"]),
    "literal_code": (["cuts", "form-operator-cuts"], ["other"]),
}


@st.composite
def feature_matrices(draw, max_rows=40):
    """(X as given to fit, X as an array for predict, nominal column indices)."""
    n = draw(st.integers(1, max_rows))
    A = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["normal", "few", "int"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    if kind == "normal":
        X = rng.normal(size=(n, A))
    elif kind == "few":
        X = rng.integers(0, 3, size=(n, A)).astype(np.float64)
    else:
        X = rng.integers(-5, 5, size=(n, A))
    if kind != "int" and draw(st.booleans()):  # NaN, inf or huge values at random places
        special = draw(st.sampled_from([np.nan, np.nan, np.inf, -np.inf, 1e39]))
        X[rng.random((n, A)) < draw(st.floats(0.0, 1.0))] = special
    if kind != "int":
        with np.errstate(over="ignore"):  # 1e39 becomes inf in float32: refused either way
            X = X.astype(draw(st.sampled_from([np.float64, np.float32])))
    nominal = draw(st.lists(st.integers(-1, A), max_size=3, unique=True))
    form = draw(st.sampled_from(["dense", "csr", "frame", "fortran"]))
    if form == "csr":
        given_X = sp.csr_matrix(np.nan_to_num(X, nan=0.0))
        X = given_X.toarray()
    elif form == "frame":
        given_X = pd.DataFrame(X, columns=[f"f{j}" for j in range(A)])
        if draw(st.booleans()):
            given_X["f0"] = pd.Categorical(np.where(np.isfinite(X[:, 0]) & (X[:, 0] > 0),
                                                    "p", "q"))
    elif form == "fortran":
        given_X = np.asfortranarray(X)
    else:
        given_X = X
    return given_X, nominal


@st.composite
def label_matrices(draw, n):
    K = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    Y = (rng.random((n, K)) < draw(st.floats(0.0, 1.0))).astype(np.uint8)
    if draw(st.integers(0, 9)) == 0:
        return Y[:, 0]  # a 1-D binary y
    return Y


def _params(draw, grammar):
    """(params, refused): some parameters set to supported values; in a quarter of the
    draws one of them set to a value that must be refused (``refused`` names it)."""
    params = {name: draw(st.sampled_from(valid)) for name, (valid, _) in grammar.items()
              if draw(st.booleans())}
    refused = None
    if draw(st.integers(0, 3)) == 0:
        refused = draw(st.sampled_from(sorted(grammar)))
        params[refused] = draw(st.sampled_from(grammar[refused][1]))
    return params, refused


_warm = set()


def _warm_up(make, params, X, fit_args):
    """Fit the configuration once on fixed data of the same form (compiles its kernels)."""
    key = (make.__name__, repr(sorted(params.items(), key=str)), type(X).__name__,
           bool(fit_args))
    if key in _warm:
        return
    _warm.add(key)
    rng = np.random.default_rng(0)
    X0 = rng.integers(0, 4, size=(30, 3)).astype(np.float32)
    Y0 = np.column_stack([X0[:, 0] > 1, X0[:, 1] > 1]).astype(np.uint8)
    if sp.issparse(X):
        X0 = sp.csr_matrix(X0)
    y0 = Y0[:, 0] if make is TursClassifier else Y0
    try:
        make(device="cpu", **params).fit(X0, y0, **({"nominal_feature_indices": [2]}
                                                    if fit_args else {}))
    except (ValueError, TypeError):
        pass


def _check_fit(make, drawn, X, y, fit_args):
    """Fit, time it and check the predictions; ValueError/TypeError are answers too, and
    the only answer to a refused parameter value."""
    params, refused = drawn
    faulthandler.dump_traceback_later(HARD_SECONDS, exit=True)
    try:
        _warm_up(make, params, X, fit_args)
        est = make(device="cpu", **params)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y, **fit_args)
        except (ValueError, TypeError):
            return
        elapsed = time.perf_counter() - start
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert refused is None, f"{refused}={params[refused]!r} was accepted"
    elapsed = time.perf_counter() - start
    assert elapsed < FIT_SECONDS, f"{make.__name__}({params}) took {elapsed:.1f} s"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # feature-name warnings of a frame
        _check_predictions(est, X, y)


def _check_predictions(est, X, y):
    pred = np.asarray(est.predict(X).todense() if sp.issparse(est.predict(X))
                      else est.predict(X))
    assert pred.shape[0] == X.shape[0]
    if isinstance(est, TursClassifier):
        proba = est.predict_proba(X)
        assert np.allclose(proba.sum(axis=1), 1.0)
        assert (pred == est.classes_[np.argmax(proba, axis=1)]).all()
        return
    Y = np.asarray(y).reshape(X.shape[0], -1)
    if isinstance(est, SeCoClassifier):
        assert set(np.unique(pred)) <= set(np.unique(Y)) | {0, 1}
        return
    scores = est.decision_function(X).reshape(X.shape[0], -1)
    assert np.isfinite(scores).all()
    pred = pred.reshape(X.shape[0], -1)
    if est.binary_predictor_ == "output-wise":
        relevant = scores > est._loss.decision_threshold
        if est._one_d:
            assert (pred[:, 0] == est.classes_[relevant[:, 0].astype(int)]).all()
        else:
            assert (pred == relevant).all()
    else:  # example-wise: every prediction is a label vector of the training data
        known = {tuple(row) for row in est.model_.label_vectors.astype(int)}
        assert all(tuple(row) in known for row in pred.astype(int))


@pytest.mark.parametrize("make, grammar", [(BoomerClassifier, BOOMER_GRAMMAR),
                                           (SeCoClassifier, SECO_GRAMMAR)],
                         ids=["boomer", "seco"])
@FUZZ
@given(data=st.data())
def test_fuzz_multi_label(make, grammar, data):
    X, nominal = data.draw(feature_matrices())
    y = data.draw(label_matrices(X.shape[0]))
    _check_fit(make, _params(data.draw, grammar), X, y,
               {"nominal_feature_indices": nominal} if nominal else {})


@settings(FUZZ, max_examples=15)
@given(st.data())
def test_fuzz_turs(data):
    X, nominal = data.draw(feature_matrices(max_rows=30))
    n_classes = data.draw(st.integers(1, 4))
    y = np.random.default_rng(X.shape[0]).integers(0, n_classes, X.shape[0])
    params, refused = _params(data.draw, TURS_GRAMMAR)
    if nominal:
        params["categorical_features"] = nominal
    _check_fit(TursClassifier, (params, refused), X, y, {})


# ARFF -------------------------------------------------------------------------------------
ARFF = """% a small MEKA file
@relation 'fuzz: -C 2'
@attribute y0 {0,1}
@attribute y1 {0,1}
@attribute a numeric
@attribute 'b c' {x,y,z}
@attribute d real
@data
1,0,0.5,x,3
0,1,?,y,-1.25
1,1,2,'z',0
0,0,-3e2,x,?
"""


@st.composite
def mutated_arff(draw):
    text = ARFF.encode()
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "insert", "delete", "replace", "comma"]))
        pos = draw(st.integers(0, len(text)))
        if op == "truncate":
            text = text[:pos]
        elif op == "insert":
            text = text[:pos] + draw(st.binary(min_size=1, max_size=4)) + text[pos:]
        elif op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 8)):]
        elif op == "replace":
            token = draw(st.sampled_from([b",", b"{", b"}", b"'", b"?", b"@data", b"\n",
                                          b"nan", b"1e400", b"@attribute e numeric\n"]))
            text = text[:pos] + token + text[pos + 1:]
        else:
            text = text.rstrip(b"\n") + b","
    return text


@settings(FUZZ, max_examples=150)
@given(mutated_arff())
def test_fuzz_load_arff(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("arff") / "fuzz.arff"
    path.write_bytes(text)
    try:
        ds = load_arff(path)
    except ValueError as exc:
        assert "fuzz.arff" in str(exc)
        return
    assert ds.X.shape[0] == ds.Y.shape[0]
    assert ds.Y.dtype == np.uint8 and set(np.unique(ds.Y)) <= {0, 1}

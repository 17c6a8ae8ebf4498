"""A team of threads (``jit.team``, ``jit.atomics``): tasks run once each, whatever the
threads do, and a team's fit is the one-thread fit, bit for bit."""

import threading

import numba as nb
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.estimators.boomer_params import num_threads
from gpurules.jit import prefetch, team, threads
from gpurules.jit.atomics import compare_exchange, fetch_add, load_acquire, store_release


@nb.njit(nogil=True)
def _add_many(counter, times):
    for _ in range(times):
        fetch_add(counter, 8, 1)


@nb.njit
def _sequence(a):
    store_release(a, 3, 7)
    seen = load_acquire(a, 3)
    old = fetch_add(a, 3, 5)
    after_add = a[3]
    refused = compare_exchange(a, 3, 11, 0)
    swapped = compare_exchange(a, 3, 12, -1)
    return seen, old, after_add, refused, swapped, a[3]


def test_atomics_do_what_they_say():
    assert _sequence(np.zeros(16, np.int64)) == (7, 7, 12, False, True, -1)
    with pytest.raises(TypeError, match="int64 array"):
        _add_many(np.zeros(16, np.int32), 1)


def test_fetch_add_counts_every_increment_of_concurrent_threads():
    counter = np.zeros(16, np.int64)
    threads = [threading.Thread(target=_add_many, args=(counter, 200_000)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[8] == 800_000  # (a plain += loses increments here)


@nb.njit(nogil=True)
def _work(phase, task, ran, out):
    ran[phase, task] += 1
    x = 0.0
    for k in range(200 * (task % 5 + 1)):  # tasks of unequal length
        x += np.sqrt(k + phase)
    out[phase, task] = x


@nb.njit(nogil=True)
def _leader(state, phases, ran, out, current, fail_at):
    """Publish ``phases`` phases of a varying number of tasks; check each phase's results
    are all there when :func:`team.finish` returns."""
    missing = 0
    for p in range(phases.shape[0]):
        if p == fail_at:
            raise ValueError("the leader failed")
        current[0] = p
        generation = team.publish(state, phases[p])
        mine = 0
        while True:
            c = team.take(state, generation)
            if c >= phases[p]:
                break
            _work(p, c, ran, out)
            mine += 1
        team.finish(state, phases[p], mine)
        for c in range(phases[p]):
            missing += out[p, c] == 0
    return missing


@nb.njit(nogil=True)
def _helper(state, ran, out, current, taken):
    while True:
        c = team.offered(state)
        if c == team.STOPPED:
            return
        if c >= 0:
            _work(current[0], c, ran, out)
            taken[0] += 1
            team.done(state)


def _run_team(n_threads, phases, fail_at=-1):
    state = team.new_state()
    ran = np.zeros((phases.shape[0], phases.max()), np.int64)
    out = np.zeros(ran.shape)
    current, taken = np.zeros(1, np.int64), np.zeros(1, np.int64)
    missing = team.run(state, n_threads, _leader, (state, phases, ran, out, current, fail_at),
                       _helper, (state, ran, out, current, taken))
    return missing, ran, taken[0]


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_every_task_runs_once_and_the_leader_waits_for_its_helpers(n_threads, monkeypatch):
    """Phases of 1-11 tasks, many of them: a ``publish`` that wrote the task count before
    closing the last phase's word let a helper take a task twice in 6 of 30 runs of 3,000
    phases (4 threads; seated on any machine)."""
    monkeypatch.setattr(team.SEATS, "cores", lambda: 4)
    phases = np.random.default_rng(0).integers(1, 12, 20_000)
    missing, ran, taken = _run_team(n_threads, phases)
    assert missing == 0
    want = np.arange(ran.shape[1])[None, :] < phases[:, None]
    np.testing.assert_array_equal(ran, want.astype(np.int64))
    if n_threads == 1:
        assert taken == 0


def test_a_leader_that_raises_stops_its_helpers():
    with pytest.raises(ValueError, match="the leader failed"):
        _run_team(3, np.full(100, 4), fail_at=50)
    assert not [t for t in threading.enumerate() if t.name.startswith("gpurules-team")]


def test_teams_at_once_share_the_cores(monkeypatch):
    """A team gets only the helpers the cores have room for (``team.SEATS``): a second
    team while the first holds both cores runs its leader alone, and the seats come back."""
    monkeypatch.setattr(team.SEATS, "cores", lambda: 2)
    helped, inside, release, out = [], threading.Event(), threading.Event(), []

    def first():
        inside.set()
        assert release.wait(10)
        return "first"
    holder = threading.Thread(target=lambda: out.append(
        team.run(team.new_state(), 2, first, (), helped.append, ("first",))))
    holder.start()
    assert inside.wait(10)
    assert team.run(team.new_state(), 2, lambda: "second", (), helped.append,
                    ("second",)) == "second"
    release.set()
    holder.join(10)
    assert out == ["first"]
    assert team.run(team.new_state(), 3, lambda: "third", (), helped.append,
                    ("third",)) == "third"
    assert helped == ["first", "third"]  # the third: one helper, as the cores allow


def test_all_cores_means_at_most_numbas_thread_count(monkeypatch):
    """``parallel_*="true"`` takes at most ``NUMBA_NUM_THREADS`` (which joblib's process
    workers set to their share of the cores): a team's threads are not Numba's own."""
    monkeypatch.setattr(nb.config, "NUMBA_NUM_THREADS", 1)
    assert num_threads("parallel_rule_refinement", "true") == 1
    assert num_threads("parallel_rule_refinement", "true{num_preferred_threads=2}") == 1


def _fit(X, Y, n_threads, **kw):
    parallel = "false" if n_threads == 1 else f"true{{num_preferred_threads={n_threads}}}"
    return BoomerClassifier(device="cpu", max_rules=25, random_state=3,
                            parallel_rule_refinement=parallel, **kw).fit(X, Y).model_


def _same(a, b):
    for name in ("default_scores", "cond_feature", "cond_op", "cond_threshold",
                 "rule_cond_start", "head_label", "head_score", "rule_head_start"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.fixture
def teams_run(monkeypatch):
    """The teams the fits run: (threads, the helpers' search) per ``team.run`` call; a team
    from 5,000 visits of a search at full coverage (``threads.MIN_PARALLEL_FIT``), so that
    small fits have one."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_FIT", 5000)
    calls = []

    def counted(state, n_threads, leader, leader_args, helper, helper_args):
        search = helper.py_func.__name__.removeprefix("_help_searches_")
        calls.append((n_threads, search.removesuffix("_helper")))
        return run(state, n_threads, leader, leader_args, helper, helper_args)
    run = team.run
    monkeypatch.setattr(team, "run", counted)
    return calls


@pytest.fixture(scope="module")
def counts():
    X, Y = make_multilabel_classification(n_samples=1200, n_features=60, n_classes=5,
                                          random_state=2)
    return X.astype(np.float32), Y.astype(np.uint8)


@pytest.mark.parametrize("options", [
    {},  # the dense exact search
    {"instance_sampling": "with-replacement", "feature_sampling": "none"},
])
def test_a_team_fits_the_one_thread_model(counts, teams_run, options):
    X, Y = counts
    one = _fit(X, Y, 1, **options)
    assert not teams_run
    _same(_fit(X, Y, 2, **options), one)
    assert set(teams_run) == {(2, "exact_search")}  # (a team per batch of rules)


@pytest.mark.parametrize("compacting", [False, True])
def test_a_team_fits_the_one_thread_model_on_sparse_data(counts, teams_run, monkeypatch,
                                                         compacting):
    """The sparse search reading its entries or compacting them
    (``representations.team_state``: where the statistics outgrow the caches, forced
    here). (Non-decomposable statistics in a team: ``test_boomer_non_decomposable``.)"""
    X, Y = counts
    X = sp.csr_matrix(X)
    if compacting:
        monkeypatch.setattr(prefetch, "PREFETCH_BYTES", 0)
    kw = {"feature_sampling": "none", "feature_format": "sparse"}
    one = _fit(X, Y, 1, **kw)
    _same(_fit(X, Y, 2, **kw), one)
    search = "sparse_search_compacting" if compacting else "sparse_search"
    assert set(teams_run) == {(2, search)}


def test_small_fits_and_beam_search_take_no_team(counts, teams_run):
    X, Y = counts
    _fit(X[:300, :10], Y[:300], 2)  # 300 examples x 4 sampled features: too small
    _fit(X, Y, 2, rule_induction="top-down-beam-search")
    assert not teams_run

"""The ``verbose`` parameter and the progress log (``gpurules/progress.py``)."""

import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import load_iris

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.datasets import load_example
from gpurules.progress import MAX_RULES, TIME_LIMIT, FitProgress, check_verbose

LOGGER = "gpurules"


@pytest.fixture(scope="module")
def emotions():
    ds = load_example("emotions", "train")
    return ds.X[:120], ds.Y[:120]


def fit_messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "gpurules.fit"]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


# -- validation ------------------------------------------------------------------------
@pytest.mark.parametrize("value, error, match", [
    (-1, ValueError, "verbose must be >= 0"),
    (1.0, TypeError, "verbose must be a non-negative int.*float"),
    ("1", TypeError, "verbose must be a non-negative int.*str"),
    (None, TypeError, "verbose must be a non-negative int"),
])
@pytest.mark.parametrize("cls", [BoomerClassifier, SeCoClassifier, TursClassifier])
def test_invalid_verbose_raises_before_fitting(cls, value, error, match):
    X = np.zeros((4, 1), np.float32)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(error, match=match):
        cls(device="cpu", verbose=value).fit(X, y)


def test_check_verbose_accepts_ints_and_bools():
    assert check_verbose(0) == 0 and check_verbose(np.int64(2)) == 2
    assert check_verbose(True) == 1


# -- FitProgress -----------------------------------------------------------------------
def test_progress_lines_every_tenth_of_max_rules_then_a_summary(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        with FitProgress("Est", verbose=1, max_rules=50, clock=clock) as progress:
            for r in range(1, 51):
                clock.now += 0.1
                progress.rule(r)
            progress.stop(50, MAX_RULES)
    lines = fit_messages(caplog)
    assert len(lines) == 11
    assert lines[0] == "Est: 5/50 rules, 10.0 rules/s, 0.5 s elapsed"
    assert lines[9] == "Est: 50/50 rules, 10.0 rules/s, 5.0 s elapsed"
    assert lines[10] == "Est: fit done: 50 rule(s) in 5.0 s; stopped: max_rules=50 reached"


def test_a_line_after_ten_seconds_without_one(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        with FitProgress("Est", verbose=1, max_rules=1000, clock=clock) as progress:
            clock.now = 3.0
            progress.rule(1)  # not a multiple of 100, 3 s: silent
            clock.now = 12.0
            progress.rule(2)  # 12 s since the start: a line
            clock.now = 15.0
            progress.rule(3)
            progress.stop(3, "no refinement found")
    assert fit_messages(caplog) == [
        "Est: 2/1000 rules, 0.2 rules/s, 12.0 s elapsed",
        "Est: fit done: 3 rule(s) in 15.0 s; stopped: no refinement found"]


def test_verbose_2_logs_each_rule(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        with FitProgress("Est", verbose=2, max_rules=100, clock=clock) as progress:
            clock.now = 1.0
            progress.rule(1, conditions=3, covered=np.array([True, False, True]), head=2)
    assert fit_messages(caplog)[0] == ("Est: rule 1: 3 condition(s), covers 2 training "
                                       "example(s), head of 2 label(s)")


def test_verbose_0_is_silent_except_for_time_limit(caplog):
    with caplog.at_level(logging.INFO, logger=LOGGER):
        with FitProgress("Est", verbose=0, max_rules=10) as progress:
            for r in range(1, 11):
                progress.rule(r, 1, 1, 1)
            progress.stop(10, MAX_RULES)
        assert fit_messages(caplog) == []
        with FitProgress("Est", verbose=0, max_rules=10, time_limit=2) as progress:
            progress.stop(4, TIME_LIMIT)
    [line] = fit_messages(caplog)
    assert line.startswith("Est: time_limit=2 s reached: the fit stopped after 4 rule(s)")


def test_configured_logging_gets_no_extra_handler(caplog):
    """pytest's handler is on the root logger: the program's configuration decides."""
    gp = logging.getLogger(LOGGER)
    before = list(gp.handlers), gp.level
    with caplog.at_level(logging.INFO, logger=LOGGER):
        with FitProgress("Est", verbose=1, max_rules=1):
            assert gp.handlers == before[0]
    assert (list(gp.handlers), gp.level) == before


def test_without_logging_configuration_verbose_prints_to_stderr():
    """A fresh process with no logging configured: verbose=1 prints, verbose=0 does not,
    and the logger is left as found."""
    code = textwrap.dedent("""
        import logging
        from gpurules.progress import FitProgress
        gp = logging.getLogger("gpurules")
        for verbose in (0, 1):
            with FitProgress("Est", verbose=verbose, max_rules=1) as progress:
                progress.rule(1)
                progress.stop(1, "done")
            assert gp.handlers == [] and gp.level == logging.NOTSET
            assert logging.getLogger().handlers == []
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "ok"
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("Est: 1/1 rules, ")
    assert lines[1].startswith("Est: fit done: 1 rule(s) in ")


# -- the estimators --------------------------------------------------------------------
def test_boomer_verbose_1_logs_progress_and_why_it_stopped(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        BoomerClassifier(device="cpu", max_rules=20, verbose=1).fit(X, Y)
    lines = fit_messages(caplog)
    progress = [m for m in lines if " rules, " in m]
    assert [m.split(",")[0] for m in progress] == [f"BoomerClassifier: {r}/20 rules"
                                                   for r in range(2, 21, 2)]
    assert lines[-1].startswith("BoomerClassifier: fit done: 20 rule(s) in ")
    assert lines[-1].endswith("stopped: max_rules=20 reached")


@pytest.mark.parametrize("holdout, name", [("random", "holdout loss"),
                                            ("none", "training loss")])
def test_progress_lines_report_the_loss_global_pruning_measures(emotions, caplog, holdout,
                                                                 name):
    """With global pruning, each progress line ends with the loss it measures (the holdout
    set's, else the training set's); the last line's value is the fit's final loss."""
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        BoomerClassifier(device="cpu", max_rules=20, verbose=1, holdout=holdout,
                         global_pruning="post-pruning").fit(X, Y)
    progress = [m for m in fit_messages(caplog) if " rules, " in m]
    assert progress and all(f", {name} " in m for m in progress), progress
    losses = [float(m.rsplit(" ", 1)[1]) for m in progress]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_progress_lines_report_no_loss_without_global_pruning(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        BoomerClassifier(device="cpu", max_rules=10, verbose=1).fit(X, Y)
    assert not any(" loss " in m for m in fit_messages(caplog))


def test_boomer_verbose_2_logs_every_rule(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        clf = BoomerClassifier(device="cpu", max_rules=5, verbose=2).fit(X, Y)
    rules = [m for m in fit_messages(caplog) if ": rule " in m]
    assert len(rules) == 5  # the default rule and four rules
    assert rules[0] == (f"BoomerClassifier: rule 1: 0 condition(s), covers {len(X)} "
                        f"training example(s), head of {Y.shape[1]} label(s)")
    conditions, head = clf.model_.rule(0)
    assert f"rule 2: {len(conditions)} condition(s)" in rules[1]
    assert rules[1].endswith(f"head of {len(head)} label(s)")


def test_verbose_0_logs_nothing(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        BoomerClassifier(device="cpu", max_rules=5).fit(X, Y)
        SeCoClassifier(device="cpu", max_rules=5).fit(X, Y)
    assert fit_messages(caplog) == []


def test_time_limit_is_logged_even_at_verbose_0(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        clf = BoomerClassifier(device="cpu", max_rules=0, time_limit=1e-9).fit(X, Y)
    [line] = fit_messages(caplog)
    assert line.startswith(f"BoomerClassifier: time_limit=1e-09 s reached: the fit stopped "
                           f"after {len(clf.model_)} rule(s)")


def test_seco_summary_says_why_it_stopped(emotions, caplog):
    X, Y = emotions
    with caplog.at_level(logging.INFO, logger=LOGGER):
        clf = SeCoClassifier(device="cpu", max_rules=0, verbose=1).fit(X[:40], Y[:40])
    last = fit_messages(caplog)[-1]
    assert last.startswith(f"SeCoClassifier: fit done: {len(clf.model_)} rule(s) in ")
    assert last.endswith("stopped: every example's minority labels are covered")


def test_turs_logs_every_rule_and_the_mdl_stop(caplog):
    X, y = load_iris(return_X_y=True)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        clf = TursClassifier(device="cpu", verbose=1).fit(X, y)
    lines = fit_messages(caplog)
    n = len(clf.model_.rules)
    assert [m.split(",")[0] for m in lines[:-1]] == [f"TursClassifier: {r}/500 rules"
                                                     for r in range(1, n + 1)]
    assert lines[-1].startswith(f"TursClassifier: fit done: {n} rule(s)")
    assert "MDL score" in lines[-1] or "shortens the code" in lines[-1]


def test_in_a_terminal_verbose_1_draws_one_progress_bar(monkeypatch):
    """stderr a terminal and no logging configured: one line rewritten in place (``\\r``)
    with the bar, then the summary; never the periodic lines. ``verbose=2`` keeps its
    per-rule lines."""
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    clock = Clock()
    for verbose in (1, 2):
        term = Terminal()
        monkeypatch.setattr(sys, "stderr", term)
        gp = logging.getLogger("gpurules")
        saved = (list(gp.handlers), gp.level, gp.propagate)
        gp.handlers, gp.propagate = [], False  # no logging configured for "gpurules"
        try:
            with FitProgress("Est", verbose=verbose, max_rules=4, clock=clock) as progress:
                for r in range(1, 5):
                    clock.now += 1.0
                    progress.rule(r, 1, 3, 1, loss=("holdout loss", lambda: 0.25))
                progress.stop(4, MAX_RULES)
        finally:
            gp.handlers, gp.level, gp.propagate = saved
        out = term.getvalue()
        if verbose == 1:
            assert out.count("\r") == 4 and "rules, " in out
            assert "\rEst [" + "#" * 30 + "] 4/4 rules" in out
            assert "holdout loss 0.25" in out
            assert out.rstrip().splitlines()[-1].startswith("Est: fit done: 4 rule(s)")
            assert "Est: 2/4 rules" not in out
        else:
            assert "\r" not in out and out.count("rule 1:") == 1

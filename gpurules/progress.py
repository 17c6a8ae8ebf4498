"""The progress of a fit: what the estimators' ``verbose`` parameter logs.

Every line goes to the logger ``"gpurules.fit"`` (a child of ``"gpurules"``) at INFO:

* ``verbose=0`` (default): no progress lines. A fit stopped by ``time_limit`` still says so
  in one INFO line (the user asked for the limit, so it is not a warning; it is visible
  wherever INFO lines of ``"gpurules"`` are shown).
* ``verbose=1``: a line every ``every`` rules (about ten per fit: ``ceil(max_rules / 10)``;
  every rule for TURS, whose rules are few and slow) or when 10 s have passed since the
  last line, with the rules learned / requested, rules per second and the elapsed time
  (and, where global pruning measures a loss, that loss: "holdout loss" on the holdout
  set, else "training loss"); then a summary line: rules, time, why the fit stopped.
* ``verbose=2``: also one line per rule: its conditions, the training examples it covers
  and the size of its head.

If ``verbose > 0`` and no handler would receive the lines (``logger.hasHandlers()`` is false:
the program configured no logging), a stderr handler is attached to ``"gpurules"`` and the
logger's level lowered to INFO for the duration of the fit, so that ``verbose=1`` prints as
it does in LightGBM or XGBoost; both are restored afterwards. Where logging is configured
(a handler on ``"gpurules"`` or the root logger), the program's configuration decides: set
``logging.getLogger("gpurules").setLevel(logging.INFO)`` to see the lines. Nothing is
attached at import, and the root logger is never touched.

**In a terminal** (that stderr handler attached, and stderr a TTY), ``verbose=1`` draws a
progress bar instead of the periodic lines: one line rewritten in place (``\r``) at most
every :data:`BAR_SECONDS`, with the rules learned / requested, rules per second, the
elapsed time and the measured loss; the summary line follows it. Redirected output, and
notebooks (whose stderr is not a terminal), get the lines.

The learners call :meth:`FitProgress.rule` once per rule (never per refinement) and
:meth:`FitProgress.stop` once; with ``verbose=0`` ``rule`` returns at once.
"""

import logging
import math
import numbers
import sys
import time

logger = logging.getLogger("gpurules.fit")

# why a fit stopped (FitProgress.stop); the other reasons are the learners' own sentences
MAX_RULES = "max_rules reached"
TIME_LIMIT = "time_limit reached"

SECONDS_BETWEEN_LINES = 10.0
BAR_SECONDS = 0.2  # the terminal progress bar is redrawn at most this often
BAR_WIDTH = 30


def check_verbose(verbose):
    """``verbose`` as an int >= 0 (``True``/``False`` count as 1/0, as in scikit-learn).

    Raises:
        TypeError: not an int; ValueError: negative.
    """
    if not isinstance(verbose, numbers.Integral):
        raise TypeError(f"verbose must be a non-negative int (0 silent, 1 progress, 2 per "
                        f"rule), got {verbose!r} of type {type(verbose).__name__}")
    if verbose < 0:
        raise ValueError(f"verbose must be >= 0 (0 silent, 1 progress, 2 per rule), got "
                         f"{verbose}")
    return int(verbose)


def lines_every(max_rules, lines=10):
    """Rules between two progress lines for ``max_rules`` requested (0: unlimited)."""
    return max(1, math.ceil(max_rules / lines)) if max_rules > 0 else 100


class FitProgress:
    """The progress log of one fit; a context manager around the learning loop.

    Args:
        name: the estimator's class name (each line starts with it).
        verbose: int >= 0 (:func:`check_verbose`).
        max_rules: the rules requested (0: unlimited), as the learner counts them.
        time_limit: seconds, 0 = none (for the ``time_limit`` line).
        every: rules between two progress lines (default :func:`lines_every`).
        clock: the time source (seconds; tests pass their own).
    """

    def __init__(self, name, verbose=0, max_rules=0, time_limit=0.0, every=None,
                 clock=time.perf_counter):
        self.name = name
        self.verbose = verbose
        self.max_rules = max_rules
        self.time_limit = time_limit
        self.every = every or lines_every(max_rules)
        self.clock = clock
        self.num_rules = 0
        self.reason = None
        self._handler = None
        self._level = None
        self._bar = None  # the terminal's stream while a progress bar is drawn

    def __enter__(self):
        self.start = self._last = self.clock()
        root = logging.getLogger("gpurules")
        if self.verbose > 0 and not logger.hasHandlers():
            self._handler = logging.StreamHandler(sys.stderr)
            self._handler.setFormatter(logging.Formatter("%(message)s"))
            root.addHandler(self._handler)
            if self.verbose == 1 and _is_terminal(sys.stderr):
                self._bar = sys.stderr
            if root.getEffectiveLevel() > logging.INFO:
                self._level = root.level
                root.setLevel(logging.INFO)
        return self

    def __exit__(self, exc_type, *exc):
        if self._bar is not None:
            self._bar.write("\n")
            self._bar = None
        if exc_type is None:
            self._summary()
        root = logging.getLogger("gpurules")
        if self._handler is not None:
            root.removeHandler(self._handler)
            self._handler = None
        if self._level is not None:
            root.setLevel(self._level)
            self._level = None
        return False

    def elapsed(self):
        return self.clock() - self.start

    def rule(self, num_rules, conditions=0, covered=0, head=0, loss=None):
        """A rule was learned; ``num_rules``: the rules so far (as ``max_rules`` counts).

        For ``verbose=2``: ``conditions``, ``head`` (ints) and ``covered`` (an int, or a
        bool array of the covered examples, summed only here). ``loss``: None, or (name,
        a callable returning the loss) that the progress line reports (called only for a
        line)."""
        if self.verbose == 0:
            return
        self.num_rules = num_rules
        now = self.clock()
        if self.verbose >= 2:
            if not isinstance(covered, numbers.Integral):
                covered = int(covered.sum())
            logger.info("%s: rule %d: %d condition(s), covers %d training example(s), "
                        "head of %d label(s)", self.name, num_rules, conditions, covered, head)
        if self._bar is not None:
            if now - self._last >= BAR_SECONDS or num_rules == self.max_rules:
                self._last = now
                self._draw_bar(num_rules, now - self.start, loss)
            return
        if num_rules % self.every == 0 or now - self._last >= SECONDS_BETWEEN_LINES:
            self._last = now
            elapsed = now - self.start
            rate = num_rules / elapsed if elapsed > 0 else float("inf")
            extra = "" if loss is None else f", {loss[0]} {loss[1]():.6g}"
            logger.info("%s: %d/%s rules, %.1f rules/s, %.1f s elapsed%s", self.name,
                        num_rules, self.max_rules or "unlimited", rate, elapsed, extra)

    def _draw_bar(self, num_rules, elapsed, loss):
        """Rewrite the terminal's progress line."""
        rate = num_rules / elapsed if elapsed > 0 else float("inf")
        if self.max_rules:
            done = min(BAR_WIDTH, BAR_WIDTH * num_rules // self.max_rules)
            bar = "[" + "#" * done + "." * (BAR_WIDTH - done) + "] "
        else:
            bar = ""
        extra = "" if loss is None else f", {loss[0]} {loss[1]():.6g}"
        self._bar.write(f"\r{self.name} {bar}{num_rules}/{self.max_rules or 'unlimited'} "
                        f"rules, {rate:.1f} rules/s, {elapsed:.1f} s{extra}")
        self._bar.flush()

    def stop(self, num_rules, reason):
        """The fit ends with ``num_rules`` rules because of ``reason`` (``MAX_RULES``,
        ``TIME_LIMIT`` or a sentence). A ``time_limit`` stop is logged at any ``verbose``."""
        self.num_rules = num_rules
        self.reason = reason
        if reason == TIME_LIMIT and self.verbose == 0:
            logger.info("%s: time_limit=%g s reached: the fit stopped after %d rule(s) "
                        "(%.1f s)", self.name, self.time_limit, num_rules, self.elapsed())

    def _summary(self):
        if self.verbose == 0:
            return
        reason = self.reason or "the learner ended"
        if reason == TIME_LIMIT:
            reason = f"time_limit={self.time_limit:g} s reached"
        elif reason == MAX_RULES:
            reason = f"max_rules={self.max_rules} reached"
        logger.info("%s: fit done: %d rule(s) in %.1f s; stopped: %s", self.name,
                    self.num_rules, self.elapsed(), reason)


def _is_terminal(stream):
    """Whether ``stream`` is an interactive terminal."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False

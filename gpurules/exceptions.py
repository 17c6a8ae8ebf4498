"""Warnings that gpurules' estimators issue (import them to filter or to test for them)."""


class FitStoppedEarlyWarning(UserWarning):
    """A fit ended before ``max_rules`` because no further rule could be learned (every
    refinement of the sampled features fails ``min_coverage`` or does not improve the
    objective), or an unlimited fit reached its safety ceiling. The message says which."""

"""Sequential post-optimization of a BOOMER model (``post_optimization="sequential{...}"``).

mlrl-common 0.15 (``post_optimization/post_optimization_sequential.cpp``): after the last
rule (and after global pruning removed the unused rules), ``num_iterations`` times, every
rule in the model's order (the default rule excepted) is relearned in the context of the
others:

1. a new instance sample is drawn (the fit's random stream, continued);
2. the rule's (shrunk) scores are subtracted from the statistics of the examples its body
   covers (every example, held-out ones included, as its head was added);
3. a new rule is grown from an empty body, exactly as a new rule of the fit (top-down
   greedy, IREP, ``recalculate_predictions``, shrinkage), over the outputs of the old head
   (``refine_heads=false``) or of a new output sample (``refine_heads=true``); each step
   samples features as usual (``resample_features=true``) or searches every feature the
   old rule's conditions use, unsampled (``resample_features=false``);
4. the new rule takes the old one's place and its scores are added to what it covers.

If no rule can be grown (step 3 finds no condition), the old rule stays in the model
although its scores were taken out of the statistics (mlrl-common's behaviour). The
statistics are never recomputed: the rules that global pruning removed keep their
contribution to them, as in mlrl-common.
"""

from dataclasses import dataclass
import numpy as np

from gpurules.learners.rule_induction import StepwiseSearch


@dataclass(frozen=True)
class SequentialPostOptimization:
    """``post_optimization="sequential{num_iterations,refine_heads,resample_features}"``
    (defaults: mlrl-boomer 0.15.6's)."""

    num_iterations: int = 2
    refine_heads: bool = False
    resample_features: bool = True

    def __post_init__(self):
        if isinstance(self.num_iterations, bool) or not isinstance(self.num_iterations, int) \
                or self.num_iterations < 1:
            raise ValueError(f"post_optimization='sequential': num_iterations must be an int "
                             f">= 1, got {self.num_iterations!r}")
        for name in ("refine_heads", "resample_features"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"post_optimization='sequential': {name} must be true or "
                                 f"false, got {getattr(self, name)!r}")


def rule_features(conditions):
    """The distinct features of ``conditions`` (list of (feature, op, threshold)), sorted:
    int64 (f,)."""
    return np.unique(np.array([c[0] for c in conditions], np.int64))


class FeatureSubset(StepwiseSearch):
    """A backend's refinement search restricted to a fixed set of features: every step
    searches all of them, no sampling (``resample_features=false``): a
    :class:`~gpurules.learners.rule_induction.StepwiseSearch` whose steps map positions
    into the subset to its features; ``uniforms`` must have 0 columns. Ties between
    features go to the lowest feature index.

    Args:
        backend: the fit's backend (``backends.base.Backend``).
        features: int64 (f,) sorted distinct feature indices.
    """

    def __init__(self, backend, features):
        features = np.ascontiguousarray(features, np.int64)
        super().__init__(backend, features.shape[0], features.__getitem__)

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """``Backend.refine_rule`` over the subset (``uniforms``: float64 (R, 0))."""
        if uniforms.shape[1] != 0:
            raise ValueError("FeatureSubset searches every feature of its subset: uniforms "
                             f"must have 0 columns, got {uniforms.shape[1]}")
        return super().refine_rule(uniforms, labels, weights, totals, search,
                                   fix_label_after)

"""Heads of decomposable losses: the optimal score per label and its quality.

For a set of covered examples with summed gradient ``G`` and Hessian ``H`` of one label,
the regularised second-order objective ``G p + 1/2 (H + l2) p^2 + l1 |p|`` is minimised by

    p = -sign(G) * max(|G| - l1, 0) / (H + l2)

and the objective's improvement over ``p = 0`` (the *gain*, larger is better) is

    gain = 1/2 * max(|G| - l1, 0)^2 / (H + l2).

A complete head sums the gains of all labels; a single-label head takes the label whose
optimal score is largest in magnitude (:func:`label_choice_key`, mlrl-boomer's
``DecomposableSingleOutputRuleEvaluation``), and its quality is that label's gain. Sums arrive as fixed-point integers; ``inv_scale`` converts them back.
These functions are compiled for both backends (see ``gpurules.objectives``);
``register_jitable`` lets compiled code call them from each other.
"""

from gpurules.jit.helpers import register_jitable

HEAD_COMPLETE = 0
HEAD_SINGLE = 1


@register_jitable
def _shrunk(g_sum, h_sum, l1, l2):
    """(max(|G| - l1, 0), H + l2): the numerator and denominator of both formulas."""
    return max(abs(g_sum) - l1, 0.0), h_sum + l2


@register_jitable
def label_score(g_sum, h_sum, l1, l2):
    """Optimal score of one label. g_sum, h_sum: float64 sums. Returns float64."""
    a, denom = _shrunk(g_sum, h_sum, l1, l2)
    if a <= 0.0 or denom <= 0.0:
        return 0.0
    return -a / denom if g_sum > 0.0 else a / denom


@register_jitable
def label_choice_key(g_sum, h_sum, l1, l2):
    """|optimal score| of one label: a single-output head predicts the label with the largest
    one (the first on ties), as mlrl-boomer 0.15 does, not the label of largest gain; the
    head's quality is then that label's :func:`label_gain`. (Choosing by gain gave rules
    about 3x longer than mlrl-boomer's for the same test quality.)"""
    return abs(label_score(g_sum, h_sum, l1, l2))


@register_jitable
def label_gain(g_sum, h_sum, l1, l2):
    """Improvement of the objective by the optimal score of one label (>= 0)."""
    a, denom = _shrunk(g_sum, h_sum, l1, l2)
    if a <= 0.0 or denom <= 0.0:
        return 0.0
    return 0.5 * a * a / denom


def head_scores(g_sum, h_sum, labels, inv_scale, l1, l2, out):
    """Optimal scores of ``labels`` (int32 (m,)) from fixed-point sums g_sum, h_sum
    (int64 (K,)); written to ``out`` (float64 (m,))."""
    for idx in range(labels.shape[0]):
        k = labels[idx]
        out[idx] = label_score(g_sum[k] * inv_scale, h_sum[k] * inv_scale, l1, l2)
    return out

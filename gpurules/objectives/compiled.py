"""The learning math of ``gpurules.objectives`` compiled for the CPU with Numba."""

from gpurules.jit.cache import njit
from gpurules.jit.variants import variant
from gpurules.objectives import (exponential, fixed_point, heads, losses, multi_output,
                                 non_decomposable, quality)

label_gain = njit(inline="always")(heads.label_gain)
label_score = njit(inline="always")(heads.label_score)
loss_gradient_hessian = njit(inline="always")(losses.loss_gradient_hessian)
# with its exp inlined (Numba IR), not called: a loop of it vectorises (the statistics
# update's logistic loop; only there, as inlined code costs compile time)
exp_nonpositive = njit(inline="always")(exponential.exp_nonpositive)
loss_gradient_hessian_inlined_exp = njit(inline="always")(
    variant(losses.loss_gradient_hessian, "inlined_exp", exp_nonpositive=exp_nonpositive))
quantize = njit(inline="always")(fixed_point.quantize)
head_scores = njit(heads.head_scores)
# side_quality for a quality.family_head_mode, by its class: one family's heads only
family_side_quality = {family: njit(inline="always")(function)
                       for family, function in quality.FAMILY_SIDE_QUALITY.items()}


def side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale, params,
                 work=None, gains=None):
    """``quality.side_quality`` called from Python (pruning, IREP), compiled for the family
    of ``head_mode`` only (an int ``HEAD_*`` or a ``quality.family_head_mode``)."""
    family = family_side_quality[type(quality.family_head_mode(head_mode))]
    return family(run_g, run_h, tot_g, tot_h, complement, labels, quality.head_code(head_mode),
                  inv_scale, params, work, gains)
encode_example = njit(inline="always")(non_decomposable.encode)
multi_output_head = njit(multi_output.multi_output_head)
# inlined: a search compiled without reference counting (jit/variants.py) calls it, and a
# dispatcher compiled there would hand that overload to reference-counted callers too
work_views = njit(inline="always")(multi_output.work_views)

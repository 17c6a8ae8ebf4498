"""The learning math of ``gpurules.objectives`` compiled for the CPU with Numba."""

from gpurules.jit.cache import njit
from gpurules.jit.helpers import overload
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
    family = family_side_quality[type(quality.family_head_mode(head_mode, params))]
    return family(run_g, run_h, tot_g, tot_h, complement, labels, quality.head_code(head_mode),
                  inv_scale, params, work, gains)
encode_example = njit(inline="always")(non_decomposable.encode)
# multi_output.multi_output_head of each form (``multi_output.FORMS``), by its name
multi_output_heads = {name: njit(form.head) for name, form in multi_output.FORMS.items()}


def multi_output_head(g_sum, h_sum, labels, inv_scale, params):
    """``multi_output.multi_output_head`` of the form of ``params`` (``form_name``): a
    rule's head (labels int32 (c,), scores float64 (c,)) for g_sum int64 (K,), h_sum int64
    (K or K(K+1)/2,). Called from Python; compiled code calls :func:`family_head`."""
    return multi_output_heads[multi_output.form_name(params)](g_sum, h_sum, labels, inv_scale,
                                                              params)


def family_head(head_mode, g_sum, h_sum, labels, inv_scale, params):
    """:func:`multi_output_head` in compiled code: the head of the form of ``head_mode``'s
    family (``quality.family_head_mode``; an int or the general family: any form)."""


@overload(family_head)
def _family_head_typed(head_mode, g_sum, h_sum, labels, inv_scale, params):
    head = multi_output_heads[getattr(getattr(head_mode, "instance_class", None), "FORM",
                                      "any")]
    return lambda head_mode, g_sum, h_sum, labels, inv_scale, params: head(
        g_sum, h_sum, labels, inv_scale, params)
# inlined: a search compiled without reference counting (jit/variants.py) calls it, and a
# dispatcher compiled there would hand that overload to reference-counted callers too
work_views = njit(inline="always")(multi_output.work_views)

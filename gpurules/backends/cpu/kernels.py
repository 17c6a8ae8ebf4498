"""The learning math of ``gpurules.objectives`` compiled for the CPU with Numba."""

import numba as nb

from gpurules.objectives import (fixed_point, heads, losses, multi_output, non_decomposable,
                                 quality)

label_gain = nb.njit(inline="always", cache=True)(heads.label_gain)
label_score = nb.njit(inline="always", cache=True)(heads.label_score)
loss_gradient_hessian = nb.njit(inline="always", cache=True)(losses.loss_gradient_hessian)
quantize = nb.njit(inline="always", cache=True)(fixed_point.quantize)
head_scores = nb.njit(cache=True)(heads.head_scores)
side_quality = nb.njit(inline="always", cache=True)(quality.side_quality)
encode_example = nb.njit(inline="always", cache=True)(non_decomposable.encode)
multi_output_side = nb.njit(cache=True)(multi_output.multi_output_side)
head_from_work = nb.njit(cache=True)(multi_output.head_from_work)
work_views = nb.njit(cache=True)(multi_output.work_views)

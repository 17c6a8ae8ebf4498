"""The state record of a CUDA search (``histogram_search``, ``bin_prefix``, ``refine``): int32
(STATE_SIZE,), on the device; read by the search kernels, written by a device-resident
block's selection (``refine.py``)."""

import numpy as np

# the search's state record, int32 (STATE_SIZE,), on the device: steps a device-resident
# block recorded, whether the rule is finished (the kernels then do nothing), how many of
# the labels are searched, whether a single-label head's label was fixed, how many examples
# the rule covers (non-zero weight: a candidate must cover fewer, ``thresholds.admissible``);
# read by the search kernels, written by a block's selection (``refine.py``)
STEPS, FINISHED, NUM_LABELS, LABEL_FIXED, COVERED = range(5)
STATE_SIZE = 5


def initial_state(num_labels, covered):
    """The host state record of a search over ``num_labels`` labels for a rule covering
    ``covered`` examples of non-zero weight (``totals[2]``): no step recorded, not finished,
    every label a candidate (int32 (STATE_SIZE,))."""
    state = np.zeros(STATE_SIZE, np.int32)
    state[NUM_LABELS] = num_labels
    state[COVERED] = covered
    return state

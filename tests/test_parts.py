"""``jit.parts.balanced_parts``: the split of a kernel's items among its threads."""

import numpy as np
import pytest

from gpurules.jit.parts import balanced_parts


@pytest.mark.parametrize("S, parts", [(7, 2), (8, 2), (5, 3), (1, 2), (3, 1)])
def test_equal_costs_give_parts_of_equal_counts(S, parts):
    part = balanced_parts(np.full(S, 10, np.int64), parts)
    counts = np.bincount(part, minlength=parts)
    assert counts.sum() == S and counts.max() - counts.min() <= 1
    assert ((part >= 0) & (part < parts)).all()


def test_the_largest_item_goes_alone_and_the_loads_even_out():
    rows = np.array([100, 10, 20, 30, 40], np.int64)  # 100 against 10 + 20 + 30 + 40
    part = balanced_parts(rows, 2)
    assert part[0] != part[1] and len(set(part[1:])) == 1
    rows = np.array([5, 9, 1, 4, 7, 3, 8], np.int64)  # 37: parts of 19 and 18
    loads = np.bincount(balanced_parts(rows, 2), weights=rows, minlength=2)
    assert sorted(loads) == [18, 19]


def test_the_split_depends_on_the_costs_only():
    rows = np.array([3, 3, 0, 7, 3], np.int64)
    np.testing.assert_array_equal(balanced_parts(rows, 2), balanced_parts(rows.copy(), 2))
    np.testing.assert_array_equal(balanced_parts(rows, 2), [1, 1, 0, 0, 1])  # 7 + 0, 3 x 3

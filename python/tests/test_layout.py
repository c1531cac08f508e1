"""The two rules the array layers stand on (_layout.py): how a strided 2-D
array reads as a row-major matrix with a leading dimension, and when the
transpose is a copy. Checked against NumPy's strides for every case."""

import numpy as np
import pytest

import gtranspose as gt
from gtranspose._layout import layout, plan


def of(a):
    return layout(a.shape, a.strides, a.dtype.itemsize)


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
def test_layouts(itemsize):
    b = np.zeros((10, 12), f"V{itemsize}")
    assert of(b) == (False, 12)
    assert of(b[2:5]) == (False, 12)
    assert of(b[:, 3:7]) == (False, 12)
    assert of(b[::3]) == (False, 36)
    assert of(b.T) == (True, 12)
    assert of(b[:, 3:7].T) == (True, 12)
    assert of(np.asfortranarray(b)) == (True, 10)
    assert of(b[:, ::2]) is None
    assert of(b[::-1]) is None
    assert of(b[:, ::-1]) is None
    assert of(np.broadcast_to(b[0], (4, 12))) is None
    assert of(b[:1]) == (False, 12) and of(b[:1, ::2]) == (True, 2)  # one row: its stride unused
    assert of(b[:, :1]) == (False, 12) and of(b[::2, :1]) == (False, 24)  # one column


def test_overlapping_rows_are_staged():
    b = np.zeros(100, np.float32)
    rows = np.lib.stride_tricks.as_strided(b, shape=(10, 8), strides=(16, 4))  # rows 4 apart, 8 wide
    assert of(rows) is None
    assert np.array_equal(gt.transpose(rows), rows.T)


def test_plan():
    assert plan((False, 5), (False, 7)) == "transpose"
    assert plan((True, 5), (True, 7)) == "transpose"
    assert plan((True, 5), (False, 7)) == "copy"
    assert plan((False, 5), (True, 7)) == "copy"

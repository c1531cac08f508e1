"""The exception classes: every one a gtranspose.Error and the Python
exception it stands for, named as the package is."""

import errno
import os

import numpy as np

import pytest

import gtranspose as gt

HIERARCHY = {
    gt.GtValueError: (ValueError,),
    gt.GtOSError: (OSError,),
    gt.GtFileNotFoundError: (gt.GtOSError, FileNotFoundError),
    gt.GtPermissionError: (gt.GtOSError, PermissionError),
    gt.GtFileExistsError: (gt.GtOSError, FileExistsError),
    gt.GtIsADirectoryError: (gt.GtOSError, IsADirectoryError),
    gt.GtNotADirectoryError: (gt.GtOSError, NotADirectoryError),
    gt.GtRuntimeError: (RuntimeError,),
    gt.NoDeviceError: (gt.GtRuntimeError,),
    gt.CudaError: (gt.GtRuntimeError,),
}


@pytest.mark.parametrize("cls", list(HIERARCHY), ids=lambda c: c.__name__)
def test_every_class_is_an_error_and_its_python_kind(cls):
    assert issubclass(cls, gt.Error) and issubclass(gt.Error, Exception)
    for base in HIERARCHY[cls]:
        assert issubclass(cls, base)
    assert cls.__module__ == "gtranspose" and cls.__doc__
    with pytest.raises(gt.Error, match="a message"):
        raise cls("a message")


def test_os_errors_keep_the_message_and_errno(tmp_path):
    np.save(tmp_path / "in.npy", np.zeros((2, 3)))
    # /sys takes no new files, even from root: the temporary output cannot be made.
    with pytest.raises(gt.GtPermissionError) as info:
        gt.transpose_file(tmp_path / "in.npy", "/sys/gtranspose-test.npy")
    assert info.value.errno == errno.EACCES and isinstance(info.value, PermissionError)
    assert str(info.value).startswith("cannot create /sys/gtranspose-test.npy in folder /sys")
    assert str(info.value).endswith(os.strerror(errno.EACCES))


def test_folder_given_for_a_file(tmp_path):
    with pytest.raises(gt.GtOSError, match="is a folder, not a matrix file"):
        gt.transpose_file(tmp_path, tmp_path / "o.npy", shape=(2, 2), dtype="f32")

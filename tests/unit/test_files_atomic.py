import os

import pytest

from opsweep.files import write_atomic


def test_the_new_file_replaces_the_old_one_whole(tmp_path):
    path = tmp_path / "sub" / "page.md"
    write_atomic(path, b"first\n")
    write_atomic(path, b"second\n")
    assert path.read_bytes() == b"second\n"
    assert os.listdir(path.parent) == ["page.md"]
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "page.md"
    write_atomic(path, b"good\n")
    with pytest.raises(TypeError):
        write_atomic(path, "not bytes")  # fails while writing the temporary file
    assert path.read_bytes() == b"good\n"
    assert os.listdir(tmp_path) == ["page.md"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

"""core.files.write_atomic: whole files, through symlinks, with the user's permissions."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from fixtures import cmu_path

from core import bvh, files


@pytest.fixture
def umask_002():
    old = os.umask(0o002)
    yield
    os.umask(old)


def test_new_file_gets_the_permissions_the_umask_allows(tmp_path, umask_002):
    out = files.write_atomic(tmp_path / "a.bvh", b"text")
    assert out.read_bytes() == b"text"
    assert stat.S_IMODE(out.stat().st_mode) == 0o664
    assert os.listdir(tmp_path) == ["a.bvh"]  # no temp file left


def test_existing_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "a.bvh"
    path.write_bytes(b"old")
    path.chmod(0o640)
    files.write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o640


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.bvh"
    real.write_bytes(b"old")
    link = tmp_path / "link.bvh"
    link.symlink_to(real)
    files.write_atomic(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_read_only_file_is_refused_and_kept(tmp_path):
    path = tmp_path / "a.bvh"
    path.write_bytes(b"keep")
    path.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        files.write_atomic(path, b"new")
    assert path.read_bytes() == b"keep"


def test_bad_targets_say_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="no file name"):
        files.write_atomic("", b"x")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        files.write_atomic(tmp_path, b"x")
    with pytest.raises(FileNotFoundError, match=r"folder .*missing.* does not exist"):
        files.write_atomic(tmp_path / "missing" / "a.bvh", b"x")
    assert os.listdir(tmp_path) == []


def test_bvh_save_refuses_non_finite_numbers_and_writes_nothing(tmp_path):
    clip = bvh.load(cmu_path("09_01"))
    bad = clip.replace(offsets=clip.offsets * np.nan)
    with pytest.raises(ValueError, match="offsets hold NaN or infinite"):
        bvh.save(bad, tmp_path / "bad.bvh")
    assert os.listdir(tmp_path) == []


def test_a_failed_write_names_the_file_asked_for_not_the_hidden_temporary(tmp_path, monkeypatch):
    def full(src, dst):
        raise OSError(28, "No space left on device", src)

    monkeypatch.setattr(files.os, "replace", full)
    target = tmp_path / "take.bvh"
    with pytest.raises(OSError) as err:
        files.write_atomic(target, b"data")
    message = str(err.value)
    assert f"could not write {str(target)!r}: No space left on device; nothing written" in message
    assert ".tmp" not in message
    assert list(tmp_path.iterdir()) == []

"""official/output_paths.py: output locations checked before work, nothing created."""

import os

import pytest

from official.output_paths import OutputPathError, check_output_dir, check_output_file


def test_usable_places_pass_and_nothing_is_created(tmp_path):
    check_output_dir(str(tmp_path))
    check_output_dir(str(tmp_path / "new" / "deeper"))
    check_output_file(str(tmp_path / "new" / "out.jsonl"))
    assert os.listdir(tmp_path) == []


def test_unusable_places_are_one_line_naming_the_flag(tmp_path):
    (tmp_path / "file").write_text("x")
    cases = [
        (check_output_dir, tmp_path / "file", "output_dir", "is a file, not a directory"),
        (check_output_dir, tmp_path / "file" / "sub", "output_dir",
         f"is inside the file {tmp_path / 'file'}"),
        (check_output_file, tmp_path, "output_file", "is a directory, not a file"),
        (check_output_file, tmp_path / "file" / "out.txt", "output_file",
         f"is inside the file {tmp_path / 'file'}"),
        # /sys refuses new files even to root, whose permission bits are no obstacle.
        (check_output_dir, "/sys/bert_out", "output_dir", "cannot write in /sys"),
    ]
    for check, path, flag, message in cases:
        with pytest.raises(OutputPathError) as error:
            check(str(path), flag)
        assert str(error.value).startswith(f"--{flag}={path}: ") and message in str(error.value)
    assert sorted(os.listdir(tmp_path)) == ["file"]

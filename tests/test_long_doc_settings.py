"""--long_doc's settings: defaults from max_seq_length, and one error per bad flag naming it."""

import json

import pytest

from official import records
from official.tasks.long_doc_settings import LongDocSettings


def test_defaults_follow_max_seq_length():
    assert LongDocSettings().resolved(128) == LongDocSettings()
    assert LongDocSettings("head_tail").resolved(512).head_tokens == 127  # Sun et al.'s 128/510
    windows = LongDocSettings("windows").resolved(128)
    assert (windows.doc_stride, windows.max_windows, windows.window_pool,
            windows.window_loss) == (63, 8, "mean_logits", "document")


@pytest.mark.parametrize("settings, pair, message", [
    (LongDocSettings(doc_stride=64), False, "--doc_stride is for --long_doc=windows, not "
                                            "--long_doc=truncate"),
    (LongDocSettings("windows", head_tokens=3), False, "--head_tokens is for --long_doc=head_tail"),
    (LongDocSettings("head_tail", max_windows=2), False, "--max_windows is for --long_doc=windows"),
    (LongDocSettings("windows"), True, "this task's examples are pairs"),
    (LongDocSettings("head_tail", head_tokens=127), False, "--head_tokens must be in [0, "
                                                           "max_seq_length - 2 = 126], got 127"),
])
def test_bad_settings_name_their_flag(settings, pair, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        settings.resolved(128, pair)


@pytest.mark.parametrize("values, message", [
    ({"long_doc": "chunks"}, "long_doc must be one of truncate, head_tail, windows, got 'chunks'"),
    ({"long_doc": "windows", "window_pool": "sum"}, "window_pool must be one of mean_logits, "
                                                    "max_logits, mean_cls, got 'sum'"),
    ({"long_doc": "windows", "window_loss": "x"}, "window_loss must be one of document, window"),
    ({"long_doc": "windows", "doc_stride": 0}, "doc_stride must be at least 1, got 0"),
    ({"long_doc": "windows", "max_windows": -2}, "max_windows must be at least 1, got -2"),
    ({"long_doc": "head_tail", "head_tokens": -1}, "head_tokens must be at least 0, got -1"),
])
def test_choices_are_checked_however_the_settings_are_made(tmp_path, values, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        LongDocSettings(**values)
    path = tmp_path / "long_documents.json"
    path.write_text(json.dumps(values))
    with pytest.raises(ValueError, match=f"^{path}: {message}"):
        records.read(str(path), LongDocSettings)


def test_record_round_trip(tmp_path):
    settings = LongDocSettings("windows").resolved(64)
    records.write(str(tmp_path / "x.json"), settings)
    assert records.read(str(tmp_path / "x.json"), LongDocSettings) == settings
    with pytest.raises(ValueError, match="x.json: unknown field stride"):
        records.from_dict(LongDocSettings, {"stride": 3}, "x.json")


def test_from_flags_resolves_and_refuses_windows_cut_into_micro_batches():
    assert LongDocSettings.from_flags("windows", max_seq_length=64) == \
        LongDocSettings("windows").resolved(64)
    with pytest.raises(ValueError, match="--gradient_accumulation_steps must be 1 with "
                                         "--long_doc=windows"):
        LongDocSettings.from_flags("windows", max_seq_length=64, gradient_accumulation_steps=2)

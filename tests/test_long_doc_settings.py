"""--long_doc's settings: defaults from max_seq_length, and one error per bad flag naming it."""

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
    (LongDocSettings("chunks"), False, "--long_doc must be one of truncate, head_tail, windows"),
    (LongDocSettings(doc_stride=64), False, "--doc_stride is for --long_doc=windows, not "
                                            "--long_doc=truncate"),
    (LongDocSettings("windows", head_tokens=3), False, "--head_tokens is for --long_doc=head_tail"),
    (LongDocSettings("head_tail", max_windows=2), False, "--max_windows is for --long_doc=windows"),
    (LongDocSettings("windows"), True, "this task's examples are pairs"),
    (LongDocSettings("head_tail", head_tokens=127), False, "--head_tokens must be in [0, "
                                                           "max_seq_length - 2 = 126], got 127"),
    (LongDocSettings("windows", doc_stride=0), False, "--doc_stride must be at least 1, got 0"),
    (LongDocSettings("windows", max_windows=0), False, "--max_windows must be at least 1"),
    (LongDocSettings("windows", window_pool="sum"), False, "--window_pool must be one of"),
    (LongDocSettings("windows", window_loss="x"), False, "--window_loss must be one of"),
])
def test_bad_settings_name_their_flag(settings, pair, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        settings.resolved(128, pair)


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

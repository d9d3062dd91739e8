"""data_prep/record_cache.py: records made once per setting, and made again when cut short."""

from data_prep import record_cache


def test_made_once_per_key_and_again_when_the_file_was_cut_short(tmp_path):
    path = str(tmp_path / "train.tf_record")
    made = []

    def make():
        made.append(1)
        with open(path, "wb") as f:
            f.write(b"r" * 100)
        return {"num_examples": 4}

    def made_as(reused):
        return record_cache.CachedRecords(path, {"num_examples": 4}, reused)

    assert record_cache.cached(path, {"seq": 16}, make) == made_as(reused=False)
    assert record_cache.cached(path, {"seq": 16}, make) == made_as(reused=True)
    assert record_cache.cached(path, {"seq": 32}, make) == made_as(reused=False)
    assert len(made) == 2
    # A disk that filled up, an interrupted copy of the output_dir: the size no longer matches.
    with open(path, "r+b") as f:
        f.truncate(60)
    assert record_cache.cached(path, {"seq": 32}, make) == made_as(reused=False)
    assert len(made) == 3 and (tmp_path / "train.tf_record").stat().st_size == 100

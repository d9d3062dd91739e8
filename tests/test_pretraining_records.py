"""Tests for official.pretraining_records: the parse spec is the original reader's."""

from official import pretraining_records
from tests.reference_bert import original_name_to_features


def test_parse_spec_is_the_originals():
    spec = pretraining_records.parse_spec(128, 20)
    assert spec == original_name_to_features(128, 20)
    assert set(pretraining_records.INT_FEATURES + pretraining_records.FLOAT_FEATURES) == set(spec)

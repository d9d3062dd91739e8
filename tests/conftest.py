"""Shared fixtures (a tiny BERT config and Hub-convention inputs for it, pretraining records) and
the quick tier (`pytest --quick`)."""

import atexit
import multiprocessing.process
import os
import re
import shutil
import signal
import subprocess
import tempfile

from tests.temp_root import own_folder

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The temporary folder is one of this process's (tests/temp_root.py), removed when it ends: a
# suite leaves nothing behind in /tmp. pytest's own folders stay where pytest keeps them (the
# last runs', for a look after a failure).
os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
tempfile.tempdir = os.environ["TMPDIR"] = own_folder()
atexit.register(shutil.rmtree, tempfile.tempdir, ignore_errors=True)
# A suite started as a background job (`make test &`) inherits ctrl-C ignored, and every command
# the tests start would too (an ignored signal stays ignored across exec): the tests of ctrl-C
# need it as a terminal gives it, which a handled signal becomes again in each new program.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from official.configs import BertConfig  # noqa: E402


@pytest.fixture
def tiny_config():
    keras.utils.set_random_seed(0)  # fixed weights: the mixed-precision tolerances were measured
    return BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture
def files(tiny_config, tmp_path):
    """The tiny config and a vocab of its 100 tokens as files: the `bert_config_file` and
    `vocab_file` of a fine-tuning's options (tests/test_finetuning.py's `options`)."""
    config_file = tmp_path / "bert_config.json"
    tiny_config.to_json_file(str(config_file))
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                    + [f"w{i}" for i in range(95)]) + "\n")
    return {"bert_config_file": str(config_file), "vocab_file": str(vocab_file)}


@pytest.fixture
def make_inputs(tiny_config):
    """`make_inputs(batch, seq_len)`: random ids, both segments, every row's tail padded."""

    def make(batch=2, seq_len=8, seed=0):
        rng = np.random.default_rng(seed)
        lengths = rng.integers(1, seq_len + 1, size=batch)
        lengths[0] = seq_len  # at least one row without padding
        mask = (np.arange(seq_len)[None, :] < lengths[:, None]).astype("int32")
        return {
            "input_word_ids": rng.integers(0, tiny_config.vocab_size, (batch, seq_len),
                                           dtype="int32"),
            "input_mask": mask,
            "input_type_ids": rng.integers(0, tiny_config.type_vocab_size, (batch, seq_len),
                                           dtype="int32"),
        }

    return make


@pytest.fixture(scope="session")
def pretraining_records(tmp_path_factory):
    """Pretraining TFRecords (seq 32, 5 predictions) made by data_prep from the shipped sample,
    with a matching tiny bert_config.json: {"dir", "input_file", "bert_config_file", "vocab_file"}.
    """
    from data_prep import fast_generation
    from data_prep.pretraining_options import PretrainingDataOptions

    root = tmp_path_factory.mktemp("pretraining_records")
    here = os.path.dirname(__file__)
    vocab = os.path.join(here, "..", "data", "vocab", "uncased_vocab.txt")
    options = PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1)
    fast_generation.generate([os.path.join(here, "data", "pretraining_sample.txt")],
                             str(root / "data"), vocab, True, options, num_shards=2)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    config.to_json_file(str(root / "bert_config.json"))
    return {"dir": str(root), "input_file": str(root / "data" / "*.tfrecord"),
            "bert_config_file": str(root / "bert_config.json"), "vocab_file": vocab}


# The quick tier (`make quick`, `pytest --quick`): the tests that start no process and take no
# more than a few seconds, for the inner loop; `make test` runs every test. A test module that
# starts processes (tests/cli.py's runners, subprocess, multiprocessing) is left out whole, and
# so are the tests in SLOW_TESTS; in the quick tier a test that starts a process anyway fails,
# naming the rule, so the tier stays what it says.
STARTS_PROCESSES = re.compile(r"\b(subprocess|multiprocessing|sys\.executable|run_modules?|"
                              r"BackgroundRun|serve_requests|cli\.start)\b|^from tests\.cli import"
                              r"[^\n]*\bstart\b", re.MULTILINE)
# Tests that take seconds, or start processes from a module the rule above cannot see (node id
# prefixes; a module fixture's cost counts to its first test): those over 5 s in
# `pytest --quick --durations=0` on a loaded 2-core machine (~0.7 s of CPU each; 85% of the
# tier's time before they were left out), and the next few over 4 s.
SLOW_TESTS = (
    "tests/test_api_adapt.py::test_adapt_after_a_traced_step_runs_the_method",
    "tests/test_api_adapt.py::test_fit_again_after_adapt_is_refused_and_trains_nothing",
    "tests/test_attack.py::test_a_long_texts_deletions_are_made_a_batch_at_a_time_within_the_budget",
    "tests/test_attack.py::test_bae_candidates_are_a_numpy_berts_top_whole_words_at_the_masked_word",
    "tests/test_basic_tokenizer.py::test_every_code_point_matches_original",
    "tests/test_beam_pipeline.py::test_records_are_the_fast_generators",
    "tests/test_checkpoints_finetuned.py",
    "tests/test_checkpoints_keras_hub.py::test_a_keras_hub_preset_is_an_init_checkpoint",
    "tests/test_checkpoints_keras_hub.py::test_weights_travel_to_keras_hub_and_back",
    "tests/test_checkpoints_tf1.py::test_original_checkpoint_loads_like_weights_set_by_hand",
    "tests/test_checkpoints_training.py::test_a_fine_tuning_checkpoint_gives_its_encoder",
    "tests/test_checkpoints_training.py::test_a_pretraining_checkpoint_reads_as_the_models_weights",
    "tests/test_classifier_features.py::test_tensorflow_datasets_records_hold_the_examples_read_from_there",
    "tests/test_configs.py::test_preset_parameter_counts[base]",
    "tests/test_configs.py::test_preset_parameter_counts[medium]",
    "tests/test_crows_pairs.py::test_pseudo_log_likelihoods_equal_a_numpy_bert_masking_one_token_at_a_time",
    "tests/test_demo_stages.py",
    "tests/test_disk_full.py::test_a_checkpoint_save_on_a_full_disk_removes_its_partial_folder",
    "tests/test_distillation.py::test_a_training_step_moves_the_student_alone",
    "tests/test_distillation.py::test_distillation_model_runs_student_and_teacher_as_they_run_apart",
    "tests/test_distillation.py::test_the_teacher_is_loaded_frozen_without_dropout",
    "tests/test_distillation.py::test_the_weighted_loss_against_numpy",
    "tests/test_doc_windows.py::test_records_and_serving_make_the_same_windows[40-8-10]",
    "tests/test_doc_windows.py::test_the_originals_windows_and_max_context_on_every_small_case",
    "tests/test_docstrings.py::test_docstring_examples_run[official.api]",
    "tests/test_docstrings.py::test_docstring_examples_run[official.embeddings.static_vectors]",
    "tests/test_docstrings.py::test_docstring_examples_run[official.tasks.feature_extraction]",
    "tests/test_dropout.py::test_xla_random_bits_draws_another_mask_at_the_same_rate",
    "tests/test_encoder.py::test_jit_compile_matches_eager",
    "tests/test_encoder.py::test_keras_file_round_trip",
    "tests/test_encoder.py::test_mixed_policy_survives_a_keras_file",
    "tests/test_encoder.py::test_mixed_precision",
    "tests/test_encoder.py::test_padding_does_not_change_real_tokens[4-16-30]",
    "tests/test_export_classifier.py::test_a_loaded_export_tells_its_labels_in_output_order_and_a_regression_one_has_none",
    "tests/test_export_classifier.py::test_bad_requests_give_errors_or_defined_outputs",
    "tests/test_export_classifier.py::test_pairs_give_the_models_probabilities_and_label",
    "tests/test_export_classifier.py::test_single_text_and_regression",
    "tests/test_export_encoder.py",
    "tests/test_export_ner.py::test_a_feature_based_run_serves_its_frozen_encoder_and_bilstm_head",
    "tests/test_export_ner.py::test_entities_are_the_models_chunks",
    "tests/test_export_ner.py::test_offsets_are_characters_of_the_text",
    "tests/test_export_restoring.py",
    "tests/test_export_squad.py",
    "tests/test_fast_generation.py::test_a_failing_worker_reports_its_exception_and_leaves_no_temp_file",
    "tests/test_fast_generation.py::test_records_parse_with_the_originals_features",
    "tests/test_fast_generation.py::test_shards_are_byte_identical_whatever_the_workers",
    "tests/test_fast_instances.py::test_instances_are_well_formed",
    "tests/test_fast_instances.py::test_whole_words_are_masked_whole",
    "tests/test_feature_tagger.py::test_each_choice_is_its_layers_combined_as_the_paper_says",
    "tests/test_feature_tagger.py::test_padding_does_not_change_the_real_positions",
    "tests/test_feature_tagger.py::test_the_config_rebuilds_the_same_model",
    "tests/test_feature_tagger.py::test_the_features_are_taken_without_dropout_while_the_head_trains",
    "tests/test_finetuning.py::test_adapt_sees_the_loaded_weights_and_what_it_freezes_stays",
    "tests/test_finetuning.py::test_build_model_runs_in_the_strategys_scope",
    "tests/test_finetuning.py::test_every_split_is_read_before_any_record_is_written",
    "tests/test_fresh_clone.py::test_no_test_names_the_shared_folder",
    "tests/test_glue.py::test_read_tfds_gives_the_tsv_readers_labels",
    "tests/test_gutenberg_demo_data.py::test_the_shipped_passages_are_long_and_never_seen_before",
    "tests/test_import_rule.py::test_imports_point_one_way[official]",
    "tests/test_import_rule.py::test_the_rooms_of_official_import_downwards_only",
    "tests/test_long_text.py::test_head_tail_keeps_head_and_tail_of_long_texts_only",
    "tests/test_models.py::test_classifier_is_a_dense_layer_on_the_pooled_output",
    "tests/test_models.py::test_classifier_outputs",
    "tests/test_models.py::test_classifiers_apply_dropout_in_training",
    "tests/test_models.py::test_encoder_outputs",
    "tests/test_models.py::test_head_outputs_of_a_full_forward_pass",
    "tests/test_models.py::test_models_share_the_encoder",
    "tests/test_models.py::test_next_sentence_head_reads_the_pooled_output",
    "tests/test_models.py::test_pretrainer_outputs",
    "tests/test_models.py::test_span_labeler_start_is_column_0_end_is_column_1",
    "tests/test_original_instances.py::test_hand_built_documents_reproduce_original",
    "tests/test_original_instances.py::test_real_text_reproduces_original",
    "tests/test_original_instances.py::test_single_document_reproduces_original",
    "tests/test_peft_adaptation.py::test_a_full_fine_tuning_and_a_peft_run_never_share_an_output_dir",
    "tests/test_peft_adaptation.py::test_a_run_trains_only_its_method_and_keeps_only_that",
    "tests/test_peft_adaptation.py::test_an_artifact_is_under_5_percent_of_its_base",
    "tests/test_peft_adaptation.py::test_the_flags_must_agree_with_the_run_in_output_dir",
    "tests/test_peft_artifact.py::test_a_run_loads_on_its_base_and_refuses_another",
    "tests/test_peft_bitfit.py::test_a_run_changes_only_the_bias_terms_and_keeps_only_them",
    "tests/test_peft_bitfit.py::test_bert_base_trains_under_a_tenth_of_a_percent",
    "tests/test_peft_bitfit.py::test_served_folded_it_is_the_adapted_model",
    "tests/test_peft_frozen.py::test_a_linear_probe_keeps_the_base_and_saves_the_head_alone",
    "tests/test_peft_ia3.py::test_a_keras_file_carries_the_vectors",
    "tests/test_peft_ia3.py::test_bert_base_trains_the_papers_count",
    "tests/test_peft_ia3.py::test_merged_it_is_a_plain_bert_in_every_format[keras_hub]",
    "tests/test_peft_merging.py::test_a_runs_encoder_written_and_read_back",
    "tests/test_peft_methods.py::test_adapter_64_and_rank_8_train_under_4_percent",
    "tests/test_probing_study.py",
    "tests/test_probing_word_vectors.py::test_vectors_equal_extract_features_and_the_embedding_layer",
    "tests/test_robustness_classifier.py",
    "tests/test_trainer.py::test_accumulated_micro_batches_give_the_big_batch_update",
    "tests/test_trainer.py::test_variables_the_loss_does_not_use_are_left_alone",
    "tests/test_word_windows.py::test_the_loop_on_random_cases",
)


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="the quick tier: no test that starts a process or takes seconds")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts processes or takes seconds; not in --quick")
    if config.getoption("--quick"):
        _refuse_processes()


def _refuse_processes() -> None:
    """The quick tier's guard, for the whole session (session fixtures included): starting a
    process fails the test that does it."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"{os.environ.get('PYTEST_CURRENT_TEST')} starts a process: add "
                             "it to tests/conftest.py's SLOW_TESTS (--quick starts none)")

    subprocess.Popen.__init__ = refuse
    multiprocessing.process.BaseProcess.start = refuse
    os.fork = refuse
    os.posix_spawn = refuse


def pytest_collection_modifyitems(config, items):
    sources: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in sources:
            with open(path, encoding="utf-8") as f:
                sources[path] = bool(STARTS_PROCESSES.search(f.read()))
        if sources[path] or item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--quick"):
        kept = [item for item in items if not item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=[item for item in items
                                             if item.get_closest_marker("slow")])
        items[:] = kept

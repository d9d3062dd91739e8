r"""Runs a behavioural test suite (CheckList's) on a classifier export and tables the failures.

    python -m data_prep.checklist_suite \
      --input_file=../shared/data/robustness/checklist/sentiment_suite.tar.gz \
      --output_file=sentiment_suite.jsonl
    python -m run_scripts.behavioral_test --export_dir=exports/sst2 \
      --suite=sentiment_suite.jsonl --output_dir=behavioral --sample=500

--export_dir is a single-text classifier export (export_saved_model of a classification run;
official/robustness/classifier.py reads it): its export_dir (the newest version) or a version.
--suite is a JSON-lines suite (official/robustness/suite.py). --label_map says which export
label is which suite class ("0:negative,1:positive"); without it, labels that are class names
map to themselves and SST-2's "0", "1" to negative, positive. A two-label export on a
three-class suite is read with CheckList's neutral band (official/robustness/behavioral.py).

Output in --output_dir: behavioral_results.json (per test: cases, run, filtered, failed, the
failure rate and three failing examples; per capability) and behavioral_results.md; the
tests' table is printed too. --sample N runs at most N cases a test, drawn with --seed (the
same flags give the same bytes). Every flag, the suite and the output folder are checked
before TensorFlow loads; a mistake is one line.
"""

import json
import os
from typing import NamedTuple

from absl import flags, logging

from official import command_line
from official.atomic_files import open_atomically
from official.export.versions import newest_version
from official.output_paths import check_output_dir
from official.robustness import behavioral
from official.robustness.suite import SuiteTest, read_suite

RESULTS_JSON, RESULTS_MD = "behavioral_results.json", "behavioral_results.md"

flags.DEFINE_string("export_dir", None, "A single-text classifier export (export_saved_model of "
                    "a classification run): its export_dir or one version folder.")
flags.DEFINE_string("suite", None, "The JSON-lines suite (data_prep/checklist_suite.py "
                    "converts CheckList's).")
flags.DEFINE_string("output_dir", None, "Where behavioral_results.json and .md are written.")
flags.DEFINE_integer("sample", None, "Run at most this many cases of each test (default: all), "
                     "drawn with --seed.")
flags.DEFINE_integer("seed", 0, "The seed of --sample's draw.")
flags.DEFINE_integer("batch_size", 32, "Texts the export runs at once.")
flags.DEFINE_string("label_map", None, "export_label:suite_class pairs, comma-separated "
                    "(\"0:negative,1:positive\"); default: labels that are class names map to "
                    "themselves, SST-2's 0 and 1 to negative and positive.")
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked, and the suite read."""
    tests: list[SuiteTest]
    label_map: dict[str, str] | None


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): the flags, the suite
    read and checked, the label map against the suite's classes, the export's SavedModel
    there, the output folder writable."""
    if FLAGS.seed < 0:
        raise ValueError(f"--seed={FLAGS.seed}: must be 0 or more")
    for flag, least in (("batch_size", 1), ("sample", 1)):
        value = FLAGS[flag].value
        if value is not None and value < least:
            raise ValueError(f"--{flag}={value}: must be at least {least}")
    tests = read_suite(FLAGS.suite)
    label_map = None
    if FLAGS.label_map is not None:
        try:
            label_map = behavioral.parse_label_map(FLAGS.label_map)
        except ValueError as e:
            raise ValueError(f"--label_map={FLAGS.label_map}: {e}") from None
        unknown = [name for name in label_map.values() if name not in tests[0].classes]
        if unknown:
            raise ValueError(f"--label_map={FLAGS.label_map}: the suite has no class "
                             f"{unknown[0]!r} (its classes: {', '.join(tests[0].classes)})")
    try:
        newest_version(FLAGS.export_dir)
    except ValueError as e:
        raise ValueError(f"--export_dir: {e}") from None
    check_output_dir(FLAGS.output_dir)
    return Plan(tests, label_map)


def job(plan: Plan) -> dict:
    """The run (see the module docstring); returns the report written."""
    from official.robustness.classifier import single_text_classifier

    model = single_text_classifier(FLAGS.export_dir, "--export_dir")
    classes = plan.tests[0].classes
    flag = f"--label_map={FLAGS.label_map}" if FLAGS.label_map else "--label_map"
    try:
        label_map = plan.label_map or behavioral.default_label_map(model.labels, classes)
        columns = behavioral.export_columns(model.labels, label_map, classes)
    except ValueError as e:
        raise ValueError(f"{flag}: {e}") from None
    logging.info("%s: labels %s read as %s", model.path, model.labels,
                 ", ".join(f"{k} -> {v}" for k, v in label_map.items()))

    batch_size = FLAGS.batch_size
    results = behavioral.run_suite(
        plan.tests, lambda texts: model.probabilities(texts, batch_size), columns,
        FLAGS.sample, FLAGS.seed)
    report = {"export": model.path, "export_labels": model.labels, "label_map": label_map,
              "suite": FLAGS.suite, "classes": list(classes), "sample": FLAGS.sample,
              "seed": FLAGS.seed, "tests": results,
              "capabilities": behavioral.capability_summary(results)}
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open_atomically(os.path.join(FLAGS.output_dir, RESULTS_JSON)) as f:
        json.dump(report, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open_atomically(os.path.join(FLAGS.output_dir, RESULTS_MD)) as f:
        f.write(behavioral.markdown(report))
    print(behavioral.table(results))
    logging.info("wrote %s and %s in %s", RESULTS_JSON, RESULTS_MD, FLAGS.output_dir)
    return report


if __name__ == "__main__":
    command_line.main("behavioral_test", prepare, job,
                       required=["export_dir", "suite", "output_dir"])

r"""Finds the corpus lines closest in meaning to each query, with a sentence-encoder export.

    python -m run_scripts.export_saved_model --export_type=sentence_encoder \
      --init_checkpoint=all-MiniLM-L6-v2 --export_dir=exports/minilm
    python -m run_scripts.semantic_search --export_dir=exports/minilm \
      --corpus_file=corpus.txt --queries_file=queries.txt --top_k=5

The corpus and the queries are UTF-8 files of one text per line; empty lines are skipped and
results name the corpus line by its number. --export_dir is an export_dir (its newest numbered
version is used) or one version folder. The corpus is embedded once into --index_dir (default
`<corpus_file>.index/`) and reused by later runs while the corpus and the export are unchanged
(official/retrieval/index.py). The search is exact cosine similarity by default
(official/retrieval/search.py); --index=ann searches an approximate FAISS index built and
reused beside the exact one under the same rules (official/retrieval/ann.py): each query scans
4-bit codes of the rows of its --ann_probe nearest of --ann_lists k-means lists and re-scores
the --ann_rerank best exactly, so a large corpus is searched many times faster at a small loss
of recall (every list probed and a rerank of the whole corpus is exact search):

    python -m run_scripts.semantic_search --export_dir=exports/minilm \
      --corpus_file=corpus.txt --queries_file=queries.txt --index=ann

Output: without --output_file, each query and its results as lines of
`rank  score  line N  text`; with it, JSON lines, one per query:
{"query": ..., "results": [{"rank": 1, "score": 0.83, "line": 12, "text": ...}, ...]}.
Every input is checked before the corpus is embedded; a bad one ends the run with one line.
"""

import json
import os
from typing import NamedTuple

from absl import flags, logging

from official import command_line
from official.atomic_files import open_atomically
from official.output_paths import check_output_dir, check_output_file
from official.retrieval import index as retrieval_index
from official.retrieval.search import top_k

flags.DEFINE_string("export_dir", None, "A sentence_encoder export (export_saved_model "
                    "--export_type=sentence_encoder): its export_dir or one version folder.")
flags.DEFINE_string("corpus_file", None, "UTF-8 text, one text to search per line.")
flags.DEFINE_string("queries_file", None, "UTF-8 text, one query per line.")
flags.DEFINE_integer("top_k", 10, "Results per query (all of the corpus when it is smaller).")
flags.DEFINE_string("index_dir", None, "Where the corpus's vectors are kept and reused "
                    "(default: <corpus_file>.index).")
flags.DEFINE_enum("index", "exact", ["exact", "ann"], "exact: every corpus vector scored; "
                  "ann: an approximate FAISS index (IVF, 4-bit codes, exact re-ranking), "
                  "built beside the exact one.")
flags.DEFINE_integer("ann_lists", 0, "--index=ann: k-means lists the corpus is cut into (0: "
                     "about sqrt(corpus texts), 39 texts a list at least); a change rebuilds "
                     "the approximate index.")
flags.DEFINE_integer("ann_probe", 0, "--index=ann: lists searched per query (0: a quarter "
                     "of them; more: higher recall, slower).")
# 500: the 4-bit codes rank a large corpus's near ties loosely. At 1M vectors of real text,
# recall@10 stopped at 0.84 with 100 re-scored however many lists were probed, and reached 0.97
# with 500 at the default probe, still over 10x exact search's queries/s (bench/ann_search.md).
flags.DEFINE_integer("ann_rerank", 500, "--index=ann: candidates per query re-scored "
                     "exactly (at least --top_k; more: higher recall, slower).")
flags.DEFINE_integer("batch_size", 32, "Texts embedded at once.")
flags.DEFINE_string("output_file", None, "Write the results here as JSON lines instead of "
                    "printing them.")
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked, and the texts read."""
    corpus: retrieval_index.Texts
    queries: retrieval_index.Texts
    index_dir: str


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): the flags, both texts
    files read and checked, the places written."""
    for flag in ("top_k", "batch_size", "ann_rerank"):
        if FLAGS[flag].value < 1:
            raise ValueError(f"--{flag}={FLAGS[flag].value}: must be at least 1")
    corpus = retrieval_index.read_texts(FLAGS.corpus_file, "--corpus_file")
    if FLAGS.ann_probe < 0:
        raise ValueError(f"--ann_probe={FLAGS.ann_probe}: must be 0 (automatic) or more")
    if FLAGS.ann_lists < 0 or FLAGS.ann_lists > len(corpus.texts):
        raise ValueError(f"--ann_lists={FLAGS.ann_lists}: must be 0 (automatic) or 1 to the "
                         f"corpus's {len(corpus.texts)} texts")
    if FLAGS.ann_lists and FLAGS.ann_probe > FLAGS.ann_lists:
        raise ValueError(f"--ann_probe={FLAGS.ann_probe}: more than --ann_lists="
                         f"{FLAGS.ann_lists}")
    queries = retrieval_index.read_texts(FLAGS.queries_file, "--queries_file")
    index_dir = FLAGS.index_dir or retrieval_index.default_index_dir(FLAGS.corpus_file)
    check_output_dir(index_dir, "index_dir")
    if FLAGS.output_file:
        check_output_file(FLAGS.output_file)
    if not os.path.isdir(FLAGS.export_dir):
        raise ValueError(f"--export_dir: {FLAGS.export_dir}: no such folder")
    return Plan(corpus, queries, index_dir)


def job(plan: Plan) -> list[dict]:
    """The run (see the module docstring); returns one {"query", "results"} per query."""
    from official.retrieval.encoder import SentenceEncoder

    k, batch_size, output_file = FLAGS.top_k, FLAGS.batch_size, FLAGS.output_file
    try:
        encoder = SentenceEncoder(FLAGS.export_dir)
    except ValueError as e:
        raise ValueError(f"--export_dir: {e}") from None

    index, _ = retrieval_index.load_or_build(plan.index_dir, plan.corpus, encoder, batch_size)
    if k > len(index):
        logging.warning("--top_k=%d is more than the corpus's %d texts: every text is "
                        "returned", k, len(index))
    vectors = retrieval_index.embed_texts(encoder, plan.queries.texts, batch_size,
                                          what="queries")
    if FLAGS.index == "ann":
        from official.retrieval import ann

        ann_index, _ = ann.load_or_build(plan.index_dir, index, ann.AnnParams(FLAGS.ann_lists))
        rows, scores = ann.top_k(ann_index, vectors, k, FLAGS.ann_probe, FLAGS.ann_rerank)
    else:
        rows, scores = top_k(vectors, index.vectors, k)
    # A -1 row: the probed lists held fewer than top_k texts (--index=ann only).
    results = [{"query": query, "results": [
        {"rank": rank, "score": float(score), "line": index.lines[row], "text": index.texts[row]}
        for rank, (row, score) in enumerate(zip(query_rows, query_scores), start=1)
        if row >= 0]}
        for query, query_rows, query_scores in zip(plan.queries.texts, rows, scores)]
    if output_file:
        with open_atomically(output_file) as f:
            for result in results:
                f.write(json.dumps(result, ensure_ascii=False) + "\n")
        logging.info("wrote the results of %d queries to %s", len(results), output_file)
    else:
        for result in results:
            print(f"query: {result['query']}")
            for hit in result["results"]:
                print(f"  {hit['rank']:>3}  {hit['score']:.4f}  line {hit['line']}  "
                      f"{hit['text']}")
    return results


if __name__ == "__main__":
    command_line.main("semantic_search", prepare, job,
                       required=["export_dir", "corpus_file", "queries_file"])

#!/usr/bin/env bash
# bench/device_check.sh: what this project must show on a GPU, in one run of at most 8 minutes.
#
#   bash bench/device_check.sh [SUMMARY_FILE]     the checks (below); the summary goes to
#                                                 $OUT/device_check.txt when OUT is set, else to
#                                                 SUMMARY_FILE, else /tmp/device_check.txt, and
#                                                 the full log beside it (device_check.log)
#   bash bench/device_check.sh --prepare          here, before a device session: copies the MRPC
#                                                 data and the MiniLM weights into .device_check/
#                                                 (ignored through .git/info/exclude, so that
#                                                 `carry` can name it), the weights split in two
#   DEVICE_CHECK_ON_CPU=1 bash bench/device_check.sh   smoke: every step at tiny sizes on the CPU,
#                                                 to prove this script before device time is spent
#
# Steps, in this order (DEVICE_CHECK_PARTS=tests,pretrain,finetune,serve picks parts):
#   probe       TensorFlow and the GPU it sees (one matmul run on it), and what an embedding gather
#               does with an id >= vocab_size on the CPU and the GPU, with and without XLA
#   tests       the tests that matter most on a device, by node id: float16/bfloat16 (mixed
#               precision forward, heads, loss scaling), XLA (jit_compile against eager, dropout's
#               masks, the XLA-compiled classifier export, run_pretraining --dtype=bfloat16
#               --jit_compile). Left out on purpose: the float16 case of
#               test_mixed_precision_xla_lamb_and_mirrored_runs and
#               test_run_classifier::test_mirrored_strategy_mixed_precision_and_xla: both use
#               --distribution_strategy=mirrored without --num_gpus, which mirrors over the CPU
#               even where a GPU is; the fp16 step trains in float16 on the GPU instead.
#   vocab_size  `pytest -k vocab_size tests/test_bad_inputs_*.py`: an out-of-range token id must
#               still be an error on a GPU, where the gather itself returns zeros (and under XLA
#               the last row, on the CPU too: the probe shows both). Where no such file exists
#               this step says MISSING and counts as failed (nothing was verified).
#   fp16        run_pretraining --dtype=float16 (dynamic loss scaling), plain and --jit_compile,
#               under the default strategy (the GPU), 20 steps of a tiny model
#   pretrain    BERT-Base, seq 128, bfloat16 + XLA, batch 256 (DEVICE_CHECK_PRETRAIN_BATCH):
#               sequences/s; MFU against the GPU's dense bf16 datasheet peak (nvidia-smi's name in
#               bench/device_check.py's table: H100/H200 SXM 989 TFLOP/s, A100 312, L4 121, ...;
#               DEVICE_CHECK_PEAK_TFLOPS overrides) and against a bf16 tf.matmul measured there
#   finetune    all-MiniLM-L6-v2 on MRPC, one epoch, through run_classifier with
#               bench/finetune_glue.py's flags: dev accuracy, beside the CPU figure when one is
#               recorded (DEVICE_CHECK_CPU_MRPC_ACCURACY, or bench/device_check.py's constant)
#   serve       export_saved_model --export_type=classifier of that output, plain and XLA; the
#               serving signature timed at batch 1, 32 and 256; the served dev accuracy
# Each step runs under `timeout`: its own budget, and never past DEVICE_CHECK_DEADLINE (470 s
# after the start; 1500 in smoke mode), so the whole run stays under 8 minutes. A step that fails
# or runs out of time is reported and the next one runs; the exit status is 1 if any failed.
# Figures are printed on lines meant to be copied into a closing note, and again at the end.
#
# Exit status: 0 every step ok, or no GPU at all (one line: nothing to check; on a machine with
# no GPU that is the expected outcome, not a failure); 1 a step failed; 2 a data path is wrong
# (one line); 3 TensorFlow cannot be imported (one line); 4 a GPU is there but TensorFlow cannot
# use it (one line); 5 the probe itself failed. A missing TensorFlow exits non-zero, not 0 with
# "skipped": whoever runs this wants a GPU checked, and on a lent machine the run has just spent
# device time verifying nothing; a 0 would read as "checked" in a log or a CI summary.
#
# Inputs (environment; each is checked before any step, with a one-line error):
#   PYTHON        the interpreter (default .venv/bin/python when there, else python3)
#   MINILM_DIR    Hugging Face all-MiniLM-L6-v2: config.json, vocab.txt and model.safetensors, or
#                 its parts model.safetensors.part-* (--prepare's split); default
#                 .device_check/minilm when there, else the pip package of bench/weights.txt
#   MRPC_DIR      GLUE's MRPC folder (train.tsv, dev.tsv); default .device_check/MRPC when there,
#                 else ../shared/data/glue/MRPC
#   DEVICE_CHECK_DATA  where --prepare writes and the defaults above look (.device_check)
#   DEVICE_CHECK_WORK  scratch folder (default a new one under /tmp, removed at the end unless
#                 DEVICE_CHECK_KEEP=1)
#   DEVICE_CHECK_PARTS, DEVICE_CHECK_TESTS (the tests step's node ids, space-separated),
#   DEVICE_CHECK_DEADLINE, DEVICE_CHECK_BUDGET_<STEP> (seconds; e.g. DEVICE_CHECK_BUDGET_SERVE),
#   DEVICE_CHECK_PRETRAIN_BATCH, DEVICE_CHECK_PEAK_TFLOPS, DEVICE_CHECK_CPU_MRPC_ACCURACY
#
# ---- On a lent GPU machine (the device tool; /work/.library/device/README.md) --------------------
# The machine has Python 3.12 and PyTorch/JAX, but no TensorFlow, and reaches no registry; what a
# call brings is the working tree plus `carry` paths, 64 MiB in all per call. Today this script
# therefore stops there at its first line: "TensorFlow cannot be imported" (exit 3).
# Bringing TensorFlow means wheels for cp312 manylinux x86_64, downloaded here with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
#     -d .whl tensorflow==2.21.0 tensorflow-text==2.21.1 keras==3.15.1 ...
# and installed there with `pip install --no-index --no-deps --target /tmp/site .whl/*.whl`:
# tensorflow 2.21.0 (573 MB), tensorflow-text 2.21.1 (60 MB), keras and its small needs (namex,
# optree, absl-py, ...: check with `pip show` there), and the CUDA 12 libraries of
# tensorflow[and-cuda], since the wheel is built for CUDA 12.5 / cuDNN 9 and the image carries
# CUDA 13's: nvidia-cublas-cu12 (581 MB), -cudnn-cu12 (717 MB), -cusparse-cu12 (367 MB),
# -cusolver-cu12 (338 MB), -nccl-cu12 (352 MB), -cufft-cu12 (201 MB), and -cuda-runtime,
# -cuda-nvrtc, -cuda-cupti, -curand, -nvjitlink, -cuda-nvcc (ptxas, which XLA calls) -cu12.
# About 3.3 GB: some 52 calls of 64 MiB, more than a session's 15 minutes of device time can
# carry (and each wheel above 64 MiB would have to be split and joined there). So this check
# needs one of: TensorFlow 2.21 with its CUDA 12 libraries in the device image, or a carry limit
# of a few GB; a person decides that, not a session. The wheel has compute_90 PTX but no sm_90
# code: on an H100/H200 the driver compiles TensorFlow's kernels at first use, which is why this
# script sets CUDA_CACHE_MAXSIZE (the steps' processes then share one compile cache).
# The data: MRPC is 1 MB, but the MiniLM weights are 87 MiB, over one call's 64 MiB, and
# ../shared is not carried (only this checkout is). `--prepare` puts both in .device_check/ with
# model.safetensors split into two parts under 48 MiB; then, with a machine lent and TensorFlow
# there, two calls back to back (the second within the 30 s the machine stays warm; ignored files
# already there are kept between calls, which this relies on and nobody has verified yet):
#   run(command="ls -l .device_check/minilm",
#       carry=[".device_check/minilm/model.safetensors.part-aa"], timeout_s=60)
#   run(command="bash bench/device_check.sh", timeout_s=540,
#       carry=[".device_check/MRPC", ".device_check/minilm/config.json",
#              ".device_check/minilm/vocab.txt", ".device_check/minilm/model.safetensors.part-ab"])
# $OUT/device_check.txt (the summary) and $OUT/device_check.log come back; then give_back.
# A machine's start takes a minute or two of the 15; this run takes at most 8; so there is no
# time for a second full run: check it here first with DEVICE_CHECK_ON_CPU=1.

set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 5
SMOKE=${DEVICE_CHECK_ON_CPU:-0}
DATA=${DEVICE_CHECK_DATA:-$REPO/.device_check}
if [ -n "${PYTHON:-}" ]; then
    PY=$PYTHON
elif [ -x "$REPO/.venv/bin/python" ]; then
    PY=$REPO/.venv/bin/python
else
    PY=python3
fi

usage() {
    sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

prepare() {
    local mrpc=${MRPC_DIR:-$REPO/../shared/data/glue/MRPC} minilm=${MINILM_DIR:-} name
    if [ -z "$minilm" ]; then
        minilm=$("$PY" -c 'from bench.minilm_known_values import find_model_dir
print(find_model_dir())' 2>/dev/null) || {
            echo "device_check --prepare: MiniLM weights not found: set MINILM_DIR or" \
                 "pip install --no-deps -r bench/weights.txt" >&2
            return 2
        }
    fi
    for name in "$mrpc/train.tsv" "$mrpc/dev.tsv" "$minilm/config.json" "$minilm/vocab.txt" \
                "$minilm/model.safetensors"; do
        [ -f "$name" ] || { echo "device_check --prepare: $name is missing" >&2; return 2; }
    done
    mkdir -p "$DATA/MRPC" "$DATA/minilm" || return 2
    cp "$mrpc/train.tsv" "$mrpc/dev.tsv" "$DATA/MRPC/" || return 2
    cp "$minilm/config.json" "$minilm/vocab.txt" "$DATA/minilm/" || return 2
    chmod u+w "$DATA/MRPC/"* "$DATA/minilm/"* || return 2
    rm -f "$DATA/minilm/model.safetensors" "$DATA/minilm/model.safetensors.part-"*
    split -b 48m "$minilm/model.safetensors" "$DATA/minilm/model.safetensors.part-" || return 2
    case "$DATA/" in
        "$REPO"/*)
            local pattern="/${DATA#"$REPO"/}/"
            if [ -d "$REPO/.git" ] && ! grep -qxF "$pattern" "$REPO/.git/info/exclude" 2>/dev/null
            then
                mkdir -p "$REPO/.git/info" && echo "$pattern" >>"$REPO/.git/info/exclude"
                echo "device_check --prepare: added $pattern to .git/info/exclude"
            fi ;;
    esac
    echo "device_check --prepare: $DATA holds MRPC and MiniLM ($(du -sh "$DATA" | cut -f1)):"
    ls -l "$DATA/MRPC" "$DATA/minilm"
    echo "carry in the first call: .device_check/minilm/model.safetensors.part-aa; in the second:"
    echo "  .device_check/MRPC .device_check/minilm/config.json .device_check/minilm/vocab.txt" \
         ".device_check/minilm/model.safetensors.part-ab (see this script's header)"
}

case "${1:-}" in
    --prepare) prepare; exit $? ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "device_check: unknown option $1 (--prepare, --help)" >&2; exit 2 ;;
esac

if ! command -v "$PY" >/dev/null 2>&1; then
    echo "device_check: no Python interpreter $PY (set PYTHON); nothing checked"
    exit 3
fi

# ---- where things go -----------------------------------------------------------------------------
if [ -n "${OUT:-}" ]; then
    SUMMARY=$OUT/device_check.txt
else
    SUMMARY=${1:-/tmp/device_check.txt}
fi
LOG=${SUMMARY%.txt}.log
[ "$LOG" = "$SUMMARY" ] && LOG=$SUMMARY.log
mkdir -p "$(dirname "$SUMMARY")" || exit 2
: >"$SUMMARY" && : >"$LOG" || exit 2
if [ -n "${DEVICE_CHECK_WORK:-}" ]; then
    WORK=$DEVICE_CHECK_WORK
    mkdir -p "$WORK" || exit 2
else
    WORK=$(mktemp -d /tmp/device_check.XXXXXX) || exit 2
fi
# shellcheck disable=SC2317  # run by the trap
cleanup() {
    if [ "${DEVICE_CHECK_KEEP:-0}" != 1 ] && [ -z "${DEVICE_CHECK_WORK:-}" ]; then
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

# TensorFlow takes all GPU memory by default, and the tests' subprocesses need some too; quiet
# C++ logs; unbuffered Python, so that a killed step's log is complete; one driver compile cache
# of the PTX kernels for every step (4 GiB, the most CUDA allows).
export TF_FORCE_GPU_ALLOW_GROWTH=true PYTHONUNBUFFERED=1
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
export CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE:-4294967296}
export CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-$WORK/cuda_cache}
if [ "$SMOKE" = 1 ]; then
    export CUDA_VISIBLE_DEVICES=""  # the CPU even where a GPU is
    DEADLINE=${DEVICE_CHECK_DEADLINE:-1500}
else
    DEADLINE=${DEVICE_CHECK_DEADLINE:-470}
fi
PARTS=${DEVICE_CHECK_PARTS:-tests,pretrain,finetune,serve}

part() {  # is part $1 asked for?
    case ",$PARTS," in *",$1,"*) return 0 ;; *) return 1 ;; esac
}

note() {  # a line for the closing note: printed and appended to the summary
    printf '%s\n' "$*" | tee -a "$SUMMARY"
}

notes_of() {  # the SUMMARY: lines of file $1, as notes
    grep '^SUMMARY: ' "$1" | sed 's/^SUMMARY: //' | while IFS= read -r line; do note "$line"; done
}

one_line() {  # one line, in the summary too, then exit $1
    local status=$1; shift
    printf '%s\n' "$*" | tee -a "$SUMMARY"
    exit "$status"
}

budget() {  # budget STEP GPU_SECONDS SMOKE_SECONDS: DEVICE_CHECK_BUDGET_<STEP> overrides
    local var="DEVICE_CHECK_BUDGET_${1^^}"
    if [ -n "${!var:-}" ]; then echo "${!var}"
    elif [ "$SMOKE" = 1 ]; then echo "$3"
    else echo "$2"; fi
}

OK=()
FAILED=()
run_step() {  # run_step NAME BUDGET COMMAND...: COMMAND under a time limit, its output logged
    local name=$1 budget=$2; shift 2
    local left=$((DEADLINE - SECONDS)) limit rc start took out=$WORK/$name.out status
    limit=$((budget < left ? budget : left))
    if ((limit < 15)); then
        note "step $name: SKIPPED ($((left > 0 ? left : 0)) s left of the $DEADLINE s deadline)"
        FAILED+=("$name")
        return 1
    fi
    echo "device_check: $name (at most $limit s) ..."
    start=$SECONDS
    timeout -k 5 "$limit" "$@" >"$out" 2>&1
    rc=$?
    took=$((SECONDS - start))
    { echo "==== $name: $* (exit $rc, $took s)"; cat "$out"; echo; } >>"$LOG"
    notes_of "$out"
    if [ "$name" = tests ] || [ "$name" = vocab_size ]; then
        # pytest's closing line, e.g. "12 passed in 41.20s", its '=' frame removed
        local closing
        closing=$(grep -E '(passed|failed|error|no tests ran)' "$out" | tail -n 1 | tr -d '=')
        note "$name: pytest: $(echo "$closing" | sed 's/^ *//; s/ *$//')"
    fi
    case $rc in
        0) status=ok ;;
        124|137) status="TIMED OUT (its limit: $limit s)" ;;
        5) status="FAILED (pytest selected no test)" ;;
        *) status="FAILED (exit $rc)" ;;
    esac
    note "step $name: $status ($took s)"
    if [ "$rc" = 0 ]; then OK+=("$name"); else FAILED+=("$name"); fi
    return "$rc"
}

# ---- probe: TensorFlow, the GPU, the data --------------------------------------------------------
[ -n "${MINILM_DIR:-}" ] || { [ -d "$DATA/minilm" ] && MINILM_DIR=$DATA/minilm; }
if [ -z "${MRPC_DIR:-}" ]; then
    MRPC_DIR=$REPO/../shared/data/glue/MRPC
    [ -d "$DATA/MRPC" ] && MRPC_DIR=$DATA/MRPC
fi
probe_args=(--minilm_dir="${MINILM_DIR:-}" --mrpc_dir="$MRPC_DIR")
if part finetune; then probe_args+=(--need_minilm --need_mrpc); fi
if part serve; then probe_args+=(--need_mrpc); fi
if [ "$SMOKE" = 1 ]; then probe_args+=(--cpu); fi
HEADER="device_check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname 2>/dev/null), commit\
 $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $("$PY" -V 2>&1)"
{
    echo "$HEADER"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi
} >>"$LOG" 2>&1
timeout -k 5 "$(budget probe 60 180)" "$PY" -m bench.device_check probe "${probe_args[@]}" \
    >"$WORK/probe.out" 2>"$WORK/probe.err"
probe_rc=$?
{ echo "==== probe (exit $probe_rc)"; cat "$WORK/probe.out" "$WORK/probe.err"; echo; } >>"$LOG"
value() { sed -n "s/^$1=//p" "$WORK/probe.out" | head -n 1; }
status=$(value status)
message=$(value message)
case "$status" in
    notf) one_line 3 "device_check: TensorFlow (with keras and tensorflow-text) cannot be" \
                     "imported by $PY ($message);" \
                     "nothing checked (bench/device_check.sh's header says how to bring it)" ;;
    nogpu) [ "$SMOKE" = 1 ] || one_line 0 "device_check: no GPU visible to TensorFlow" \
                                           "($message); nothing to check" ;;
    nvsmi_only) [ "$SMOKE" = 1 ] || one_line 4 "device_check: nvidia-smi shows a GPU but" \
        "TensorFlow sees none ($message): its CUDA 12 libraries (tensorflow[and-cuda]'s" \
        "nvidia-*-cu12 wheels) are missing or not found; nothing checked" ;;
    gpu_broken) one_line 4 "device_check: the GPU is there but unusable: $message;" \
                           "nothing checked" ;;
    gpu) ;;
    *) one_line 5 "device_check: the probe failed (exit $probe_rc:" \
                  "$(tail -n 1 "$WORK/probe.err")); nothing checked" ;;
esac
data_error=$(value data_error)
[ -z "$data_error" ] || one_line 2 "device_check: $data_error"
[ -z "$(value minilm_dir)" ] || MINILM_DIR=$(value minilm_dir)
note "$HEADER"
notes_of "$WORK/probe.out"
if [ "$SMOKE" = 1 ]; then
    note "device_check: SMOKE run on the CPU (DEVICE_CHECK_ON_CPU=1): tiny sizes, no figure is" \
         "a GPU's; $message"
else
    note "device_check: $message"
fi
note "device_check: summary $SUMMARY, log $LOG, deadline $DEADLINE s"

# ---- the steps -----------------------------------------------------------------------------------
GPU_TESTS=(
    tests/test_encoder.py::test_mixed_precision
    tests/test_encoder.py::test_masked_lm_head_under_a_mixed_policy
    tests/test_encoder.py::test_mixed_policy_reaches_the_encoder_and_the_heads
    tests/test_encoder.py::test_jit_compile_matches_eager
    tests/test_dropout.py::test_xla_draws_the_same_mask_as_the_plain_graph
    tests/test_dropout.py::test_xla_random_bits_draws_another_mask_at_the_same_rate
    tests/test_dropout.py::test_keeps_the_dtype_and_the_gradient_is_the_mask_times_the_scale
    tests/test_optimization.py::test_loss_scale_optimizer
    tests/test_export_classifier.py::test_pairs_give_the_models_probabilities_and_label
    # flags0: --dtype=bfloat16 --jit_compile under the default strategy (the GPU)
    "tests/test_run_pretraining.py::test_mixed_precision_xla_lamb_and_mirrored_runs[flags0]"
)
SMOKE_TESTS=(
    tests/test_encoder.py::test_jit_compile_matches_eager
    tests/test_dropout.py::test_keeps_the_dtype_and_the_gradient_is_the_mask_times_the_scale
)
PYTEST=("$PY" -m pytest -q -p no:cacheprovider -rfE)

if part tests; then
    if [ -n "${DEVICE_CHECK_TESTS:-}" ]; then
        read -r -a tests <<<"$DEVICE_CHECK_TESTS"
    elif [ "$SMOKE" = 1 ]; then
        tests=("${SMOKE_TESTS[@]}")
    else
        tests=("${GPU_TESTS[@]}")
    fi
    run_step tests "$(budget tests 110 300)" "${PYTEST[@]}" "${tests[@]}"

    shopt -s nullglob
    bad_inputs=(tests/test_bad_inputs_*.py)
    shopt -u nullglob
    if ((${#bad_inputs[@]} == 0)); then
        note "vocab_size: MISSING: no tests/test_bad_inputs_*.py in this checkout, so the" \
             "out-of-range token id check was not verified on this device"
        note "step vocab_size: FAILED (no test to run)"
        FAILED+=(vocab_size)
    else
        run_step vocab_size "$(budget vocab_size 45 120)" "${PYTEST[@]}" -k vocab_size \
            "${bad_inputs[@]}"
    fi

    if [ "$SMOKE" = 1 ]; then fp16_args=(--steps=3); else fp16_args=(--steps=20); fi
    run_step fp16 "$(budget fp16 60 300)" "$PY" -m bench.device_check fp16 \
        --work_dir="$WORK/fp16" "${fp16_args[@]}"
fi

if part pretrain; then
    if [ "$SMOKE" = 1 ]; then
        pretrain_args=(--size=tiny --batch=8 --calls=2 --steps_per_call=2 --matmul_n=512)
    else
        pretrain_args=(--size=base --batch="${DEVICE_CHECK_PRETRAIN_BATCH:-256}")
    fi
    run_step pretrain "$(budget pretrain 100 240)" "$PY" -m bench.device_check pretrain \
        --work_dir="$WORK" "${pretrain_args[@]}"
fi

if part finetune || part serve; then
    if [ "$SMOKE" = 1 ]; then
        rows=(--max_dev_rows=32)
        finetune_args=(--max_train_rows=64 "${rows[@]}")
        serve_args=("${rows[@]}" "--batch_sizes=1,2,4" --calls=2 --warmup=1)
    else
        rows=()
        finetune_args=()
        serve_args=()
    fi
fi
if part finetune; then
    run_step finetune "$(budget finetune 110 450)" "$PY" -m bench.device_check finetune \
        --work_dir="$WORK" --minilm_dir="$MINILM_DIR" --mrpc_dir="$MRPC_DIR" \
        --cpu_accuracy="${DEVICE_CHECK_CPU_MRPC_ACCURACY:-}" \
        ${finetune_args[@]+"${finetune_args[@]}"}
fi
if part serve; then
    run_step serve "$(budget serve 80 400)" "$PY" -m bench.device_check serve \
        --work_dir="$WORK" --mrpc_dir="$MRPC_DIR" ${serve_args[@]+"${serve_args[@]}"}
fi

# ---- the end -------------------------------------------------------------------------------------
echo
echo "---- summary ($SUMMARY) ----"
cat "$SUMMARY"
if ((${#FAILED[@]} == 0)); then
    note "device_check: all ${#OK[@]} steps ok in $SECONDS s"
    exit 0
fi
note "device_check: ${#FAILED[@]} step(s) failed: ${FAILED[*]}; ${#OK[@]} ok; $SECONDS s" \
     "(the log: $LOG)"
exit 1

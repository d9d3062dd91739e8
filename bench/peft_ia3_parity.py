"""Our IA3 (official/peft/ia3.py) against Hugging Face peft's IA3 in torch, on the same weights.

    .venv/bin/python -m bench.peft_ia3_parity [--seed=0] [--lr=3e-3]

A small random BERT classifier (2 layers, hidden 64, 4 heads, intermediate 128, no dropout) is
built here, written as a Hugging Face folder (official/checkpoints/hf.py) and loaded into
transformers' BertForSequenceClassification, its classifier set to ours. Our side applies
`--ia3`; peft's side `IA3Config(task_type=SEQ_CLS)` with the paper's three targets per layer:
target_modules each layer's attention.self.key, attention.self.value and output.dense,
feedforward_modules the output.dense (its input scaled). peft's default for BERT
(["key", "value", "output.dense"]) also matches attention.output.dense, whose input it then
scales as a feed-forward: a fourth vector per layer that the paper does not have; the bench
prints that default's count too. The pooler is frozen on both sides (our default; peft trains
modules_to_save = the classifier alone).

Printed: the logits of one batch before any update (IA3 at ones on both sides), then, after one
update of the same loss (mean cross-entropy over the batch) by the same optimiser and learning
rate (plain SGD; Adam, whose first step is about lr * sign(gradient), with epsilon 1e-8 on both
sides and with Keras' epsilon matched to torch's, see ADAM_EPSILON), the gradients' largest
difference, and the largest difference between our vectors and peft's, and between the two
sides' changes of them.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile

import keras
import numpy as np
import tensorflow as tf
import torch
from peft import IA3Config, get_peft_model
from transformers import BertForSequenceClassification
from transformers.utils import logging as transformers_logging

from official.checkpoints import hf, tf1
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.peft import methods

# Weights drawn ten times BERT's 0.02, so that the vectors' gradients are well above float32's
# resolution near 1 (with 0.02 a random model's logits are near 0 and so are the gradients).
CONFIG = BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=128, max_position_embeddings=64, type_vocab_size=2,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                    initializer_range=0.2)
# The paper's three per layer, as regular expressions over peft's module names (fullmatch).
TARGETS = r".*\.layer\.\d+\.(attention\.self\.(key|value)|output\.dense)"
FEEDFORWARD = r".*\.layer\.\d+\.output\.dense"
BATCH, SEQ = 8, 16
# Keras' Adam adds epsilon to sqrt(v) before its bias correction, torch's after: at step t
# Keras' epsilon e acts as torch's e / sqrt(1 - beta_2^t). "adam": both 1e-8 (they differ where
# a gradient is near 3e-7); "adam, epsilon matched": Keras' scaled so that step 1 is torch's.
ADAM_EPSILON = {"adam": 1e-8, "adam, epsilon matched": 1e-8 * (1 - 0.999) ** 0.5}


def batch(seed: int) -> dict[str, np.ndarray]:
    """A batch of random ids, padded tails, both segments, and labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(4, SEQ + 1, size=BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.int32)
    return {"input_word_ids": rng.integers(5, CONFIG.vocab_size, (BATCH, SEQ)).astype(np.int32)
            * mask, "input_mask": mask,
            "input_type_ids": (np.arange(SEQ)[None, :] >= lengths[:, None] // 2).astype(
                np.int32) * mask,
            "labels": rng.integers(0, 2, BATCH)}


def ours(seed: int) -> BertClassifier:
    """Our classifier with random weights (biases too), before IA3."""
    keras.utils.set_random_seed(seed)
    model = BertClassifier(build_encoder(CONFIG), 2)
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        if variable.path.endswith("bias"):
            variable.assign(rng.normal(0, 0.1, variable.shape).astype(np.float32))
    return model


def theirs(model: BertClassifier, folder: str, targets, feedforward):
    """transformers' classifier holding `model`'s weights, with peft's IA3 applied."""
    os.makedirs(folder)
    hf.write(folder, CONFIG, tf1.weights_of(model.encoder))
    torch_model = BertForSequenceClassification.from_pretrained(
        folder, num_labels=2, attn_implementation="eager")
    kernel, bias = model.classifier.dense.kernel.numpy(), model.classifier.dense.bias.numpy()
    with torch.no_grad():
        torch_model.classifier.weight.copy_(torch.from_numpy(kernel.T.copy()))
        torch_model.classifier.bias.copy_(torch.from_numpy(bias.copy()))
    config = IA3Config(task_type="SEQ_CLS", target_modules=targets,
                       feedforward_modules=feedforward)
    return get_peft_model(torch_model, config)


def their_vectors(peft_model, gradients: bool = False) -> dict[str, np.ndarray]:
    """peft's IA3 vectors (or their gradients) under our original names."""
    vectors = {}
    for name, parameter in peft_model.named_parameters():
        found = re.search(r"layer\.(\d+)\.(.*)\.ia3_l\.default$", name)
        if found:
            layer, module = found.groups()
            suffix = "ia3_input_scale" if module == "output.dense" else "ia3_scale"
            if module == "attention.output.dense":
                suffix = "attention_output_input_scale"  # peft's default only: not the paper's
            ours_name = f"bert/encoder/layer_{layer}/{module.replace('.', '/')}/{suffix}"
            value = parameter.grad if gradients else parameter.detach()
            vectors[ours_name] = value.numpy().reshape(-1).astype(np.float64)
    return vectors


def our_vectors(model) -> dict[str, np.ndarray]:
    return {name: variable.numpy().astype(np.float64)
            for name, variable in tf1.original_names(model).items() if "/ia3_" in name}


def step_ours(model, data, optimizer) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One update of mean cross-entropy; returns the logits before it and the vectors'
    gradients by original name."""
    inputs = {k: v for k, v in data.items() if k != "labels"}
    logits = model(inputs, training=False).numpy()
    with tf.GradientTape() as tape:
        out = model(inputs, training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            data["labels"], out))
    variables = model.trainable_variables
    gradients = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(gradients, variables))
    names = {id(variable): name for name, variable in tf1.original_names(model).items()}
    return logits, {names[id(v)]: g.numpy().astype(np.float64)
                    for v, g in zip(variables, gradients) if id(v) in names}


def step_theirs(peft_model, data, optimizer) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    peft_model.eval()  # no dropout (all rates are 0 anyway)
    tensors = dict(input_ids=torch.from_numpy(data["input_word_ids"]).long(),
                   attention_mask=torch.from_numpy(data["input_mask"]).long(),
                   token_type_ids=torch.from_numpy(data["input_type_ids"]).long())
    with torch.no_grad():
        logits = peft_model(**tensors).logits.numpy()
    out = peft_model(**tensors).logits
    loss = torch.nn.functional.cross_entropy(out, torch.from_numpy(data["labels"]).long())
    optimizer.zero_grad()
    loss.backward()
    gradients = their_vectors(peft_model, gradients=True)
    optimizer.step()
    return logits, gradients


def compare(seed: int, lr: float, optimizer_name: str, work_dir: str) -> None:
    data = batch(seed)
    model = ours(seed)
    peft_model = theirs(model, os.path.join(work_dir, f"hf-{optimizer_name}"), TARGETS,
                        FEEDFORWARD)
    methods.apply(model, methods.from_flags(ia3=True))
    trained_ours = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    trained_theirs = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    if optimizer_name == "sgd":
        keras_opt, torch_opt = keras.optimizers.SGD(lr), torch.optim.SGD
    else:
        keras_opt, torch_opt = keras.optimizers.Adam(lr, epsilon=ADAM_EPSILON[optimizer_name]), \
            torch.optim.Adam
    before = our_vectors(model)
    logits_ours, gradients_ours = step_ours(model, data, keras_opt)
    logits_theirs, gradients_theirs = step_theirs(peft_model, data, torch_opt(
        [p for p in peft_model.parameters() if p.requires_grad], lr=lr,
        **({"eps": 1e-8} if optimizer_name == "adam" else {})))
    after_ours, after_theirs = our_vectors(model), their_vectors(peft_model)
    assert sorted(after_ours) == sorted(after_theirs), (sorted(after_ours), sorted(after_theirs))
    value = max(np.abs(after_ours[n] - after_theirs[n]).max() for n in after_ours)
    change = max(np.abs((after_ours[n] - before[n]) - (after_theirs[n] - 1.0)).max()
                 for n in after_ours)
    largest = max(np.abs(after_ours[n] - before[n]).max() for n in after_ours)
    gradient = max(np.abs(gradients_ours[n] - gradients_theirs[n]).max() /
                   np.abs(gradients_theirs[n]).max() for n in after_ours)
    print(f"| {optimizer_name} | {lr:g} | {trained_ours} / {trained_theirs} | "
          f"{np.abs(logits_ours - logits_theirs).max():.2e} | {gradient:.2e} | {value:.2e} | "
          f"{change:.2e} | {largest:.2e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    print(f"torch {torch.__version__}, peft {__import__('peft').__version__}, "
          f"tensorflow {tf.__version__}; CPU: {_cpu()}")
    with tempfile.TemporaryDirectory() as work_dir:
        default = theirs(ours(args.seed), os.path.join(work_dir, "default"),
                         ["key", "value", "output.dense"], ["output.dense"])
        vectors = sorted(their_vectors(default))
        print(f"peft's default IA3 on BERT: {len(vectors)} vectors in {CONFIG.num_hidden_layers}"
              f" layers ({sum('attention_output' in v for v in vectors)} of them on "
              "attention.output.dense's input); the bench's targets: the paper's 3 per layer\n")
        print("| optimiser | lr | trained (ours / peft's, head included) | logits before, "
              "max abs diff | gradients, max abs diff / max abs gradient (worst vector) | "
              "vectors after, max abs diff | their changes, max abs diff | largest change |")
        print("|---|---|---|---|---|---|---|---|")
        for optimizer_name in ("sgd", *ADAM_EPSILON):
            compare(args.seed, args.lr, optimizer_name, work_dir)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next(line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    main()

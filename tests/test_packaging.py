"""pyproject.toml: `pip install .` (or `-e .`) makes the library importable from any folder.

A wheel is built from a copy of the checkout (the build writes its egg-info and build/ beside
the sources, which .gitignore must ignore in the checkout) with the setuptools already
installed, offline; it must hold every module of official/ and what its functions read
(example_checkpoint's vocab, the same bytes as data/vocab's), and require exactly
requirements.txt's pins. Installed from that wheel (`--target`, without dependencies: this
Python has them), the package makes its example checkpoint in a folder where the checkout's
data/ is out of reach. Then an editable install of a copy is imported from another folder by a
Python that otherwise could not see the copy. No install writes into the checkout itself.
"""

import os
import shutil
import subprocess
import sys
import zipfile

from tests.cli import PATIENCE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join("official", "uncased_vocab.txt")


def _copy_of_checkout(folder):
    folder.mkdir()
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy(os.path.join(REPO, name), folder / name)
    shutil.copytree(os.path.join(REPO, "official"), folder / "official",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _pip(*args):
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check",
                           "--no-input", *args], capture_output=True, text=True,
                          timeout=PATIENCE)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def _python_elsewhere(folder, code, *args):
    """`code` run in `folder` by a Python that sees neither the checkout (no PYTHONPATH) nor a
    copy of it (cwd elsewhere): only what `code` adds to its path."""
    folder.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=folder,
                          capture_output=True, text=True, timeout=PATIENCE,
                          env=dict(env, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_wheel_holds_every_module_and_requires_the_pins(tmp_path):
    source = _copy_of_checkout(tmp_path / "checkout")
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"),
         str(source))
    (wheel,) = os.listdir(tmp_path / "dist")
    with zipfile.ZipFile(tmp_path / "dist" / wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith("METADATA"))
        vocab = archive.read(VOCAB.replace(os.sep, "/"))
    modules = {os.path.relpath(os.path.join(root, f), source).replace(os.sep, "/")
               for root, _, files in os.walk(source / "official") for f in files
               if f.endswith(".py")}
    assert modules and modules <= names, sorted(modules - names)[:5]
    with open(os.path.join(REPO, "data", "vocab", "uncased_vocab.txt"), "rb") as f:
        assert vocab == f.read()
    with open(os.path.join(REPO, "requirements.txt"), encoding="utf-8") as f:
        pins = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    required = {line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")}
    assert required == pins
    # What the build wrote beside the sources is what git ignores in the checkout.
    written = [os.path.relpath(os.path.join(root, f), source)
               for entry in os.listdir(source) if entry not in ("official", "pyproject.toml",
                                                                "requirements.txt")
               for root, _, files in os.walk(source / entry) for f in files]
    assert any(".egg-info" in path for path in written), written
    ignored = subprocess.run(["git", "-C", REPO, "check-ignore", "--no-index", *written],
                             capture_output=True, text=True).stdout.split()
    assert sorted(ignored) == sorted(written)
    # A non-editable install makes the example checkpoint: nothing it reads is the checkout's.
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(tmp_path / "dist" / wheel))
    code = ("import os, site, sys; site.addsitedir(sys.argv[1]); import official.api; "
            "print(official.api.__file__); print(sorted(os.listdir("
            "official.api.example_checkpoint(sys.argv[2]))))")
    printed = _python_elsewhere(tmp_path / "elsewhere", code, target, tmp_path / "example")
    assert printed.splitlines() == [
        str(target / "official" / "api.py"),
        str(["bert_config.json", "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index",
             "vocab.txt"])]


def test_an_editable_install_imports_from_another_folder(tmp_path):
    source = _copy_of_checkout(tmp_path / "checkout")
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--no-build-isolation", "-e", str(source), "--target",
         str(target))
    code = ("import site, sys; site.addsitedir(sys.argv[1]); import official.configs; "
            "print(official.configs.__file__)")
    assert _python_elsewhere(tmp_path / "elsewhere", code, target) == str(
        source / "official" / "configs.py")

"""pyproject.toml: `pip install -e .` makes the library importable from any folder.

A wheel is built from a copy of the checkout (the build writes its egg-info beside the sources)
with the setuptools already installed, offline; it must hold every module of official/ and
require exactly requirements.txt's pins. Then an editable install into a scratch folder
(`--target`) is imported from another folder by a Python that otherwise could not see the
checkout.
"""

import os
import shutil
import subprocess
import sys
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _copy_of_checkout(folder):
    folder.mkdir()
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy(os.path.join(REPO, name), folder / name)
    shutil.copytree(os.path.join(REPO, "official"), folder / "official",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _pip(*args):
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check",
                           "--no-input", *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_the_wheel_holds_every_module_and_requires_the_pins(tmp_path):
    source = _copy_of_checkout(tmp_path / "checkout")
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"),
         str(source))
    (wheel,) = os.listdir(tmp_path / "dist")
    with zipfile.ZipFile(tmp_path / "dist" / wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith("METADATA"))
    modules = {os.path.relpath(os.path.join(root, f), source).replace(os.sep, "/")
               for root, _, files in os.walk(source / "official") for f in files
               if f.endswith(".py")}
    assert modules and modules <= names, sorted(modules - names)[:5]
    with open(os.path.join(REPO, "requirements.txt"), encoding="utf-8") as f:
        pins = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    required = {line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")}
    assert required == pins


def test_an_editable_install_imports_from_another_folder(tmp_path):
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--no-build-isolation", "-e", REPO, "--target", str(target))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The checkout is not on the path (cwd elsewhere, no PYTHONPATH): only the install finds it.
    code = ("import site, sys; site.addsitedir(sys.argv[1]); import official.configs; "
            "print(official.configs.__file__)")
    done = subprocess.run([sys.executable, "-c", code, str(target)], cwd=elsewhere,
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == os.path.join(REPO, "official", "configs.py")

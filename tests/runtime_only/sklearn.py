"""Stands in for scikit-learn in the processes the tests start (tests/cli.py's ENV puts this
folder first on their PYTHONPATH): `import sklearn` fails there as it does in a user's install of
requirements.txt, where scikit-learn is not (requirements-dev.txt has it, for the metric tests'
references).

Keras imports it when it can (for its scikit-learn wrappers, which nothing here uses), scipy with
it: 0.6 s of CPU in every process that imports TensorFlow, and the suite starts hundreds. An
entry point that came to need scikit-learn would fail here, as it would for a user.
"""

raise ImportError("scikit-learn is a test-only package (requirements-dev.txt), not installed "
                  "for the entry points")

"""A bundle's README.txt names the held-out evaluation as a command an installed package runs
(s38 tester B6: ``analysis/h1_eval.py`` is a checkout's path)."""

from __future__ import annotations

import json

from hpcds1mpi.surrogates.bundle_files import default_bundle_path
from hpcds1mpi.surrogates.bundle_readme import readme_text


def test_the_readme_names_the_held_out_command():
    manifest = json.loads((default_bundle_path() / "manifest.json").read_text())
    text = readme_text(manifest)
    assert "held-out accuracy: python -m hpcds1mpi.analysis.h1_eval.\n" in text
    assert "analysis/h1_eval.py" not in text

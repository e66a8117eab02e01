"""``quickstart --force`` over an earlier run: the new folder is built beside it and swapped in
whole at the end (``atomic.atomic_dir``), so that a Ctrl-C, a failed step or a full disk leaves
the earlier one as it was. It was deleted before anything was measured: an interrupt left
nothing of it, the runs ``learn`` had added to its model included (s47 tester M1).

The steps record where they wrote: the model's sources (manifest and README: a rerun tells
its own sweep from runs learnt beyond it by them) and the recommendation's script. Built
aside, those name the temporary folder; they are given the folder's own name before the swap,
so that the result is what a quickstart writes there directly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def name_as_final(work: Path, out: Path) -> None:
    """Rename the paths under ``work`` that the steps recorded to the same paths under ``out``:
    the model bundle's ``sources`` (its manifest and README) and ``recommendation.json``'s
    ``script``. The manifest is not among the bundle's hashed files."""
    from hpcds1mpi.atomic import write_text
    from hpcds1mpi.surrogates.bundle_files import MANIFEST, README
    from hpcds1mpi.surrogates.bundle_readme import readme_text

    def final(value):
        path = Path(str(value))
        return str(out / path.relative_to(work)) if path.is_relative_to(work) else value

    model = work / "model"
    manifest = json.loads((model / MANIFEST).read_text())
    manifest["sources"] = [final(s) for s in manifest.get("sources") or []]
    write_text(model / MANIFEST, json.dumps(manifest, indent=2), "model manifest")
    if os.path.lexists(model / README):
        write_text(model / README, readme_text(manifest), "model README")
    answer = work / "recommendation.json"
    data = json.loads(answer.read_text())
    if "script" in data:
        data["script"] = final(data["script"])
        write_text(answer, json.dumps(data, indent=2), "recommendation")


__all__ = ["name_as_final"]

"""``analysis/pareto_plot.py``: the plot written under the analyses' one output rule (RX9)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.analysis.pareto_plot import plot_fronts
from hpcds1mpi.errors import OutputError, WriteError

PNG = b"\x89PNG\r\n\x1a\n"


def _plot(path, **kwargs) -> str:
    front = np.array([[1.0, 4.0], [2.0, 2.0], [4.0, 1.0]])
    return plot_fronts(str(path), {"mobo": front}, front, (8.0, 8.0), **kwargs)


def test_a_file_already_there_is_replaced_only_with_force(tmp_path):
    """plot_fronts wrote over any file at its path without a word, where every analysis output
    is replaced only with --force (s47 tester N8): refused before anything is drawn."""
    theirs = tmp_path / "front.png"
    theirs.write_bytes(b"the user's plot")
    with pytest.raises(OutputError, match=r"front.png exists; pass --force to replace it, or "
                                          r"choose another path$") as err:
        _plot(theirs)
    assert err.value.exit_code == 2 and theirs.read_bytes() == b"the user's plot"
    assert _plot(theirs, force=True) == str(theirs)
    assert theirs.read_bytes()[:8] == PNG
    new = tmp_path / "new.png"
    _plot(new)
    assert new.read_bytes()[:8] == PNG and sorted(p.name for p in tmp_path.iterdir()) == [
        "front.png", "new.png"]


def test_a_failed_drawing_leaves_the_old_plot_whole_and_no_temporary(tmp_path, monkeypatch):
    """savefig wrote straight into the path: a failure part-way left half a PNG."""
    import matplotlib.figure

    old = tmp_path / "front.png"
    old.write_bytes(b"the old plot")

    def half(self, fname, *args, **kwargs):
        with open(fname, "wb") as fh:
            fh.write(PNG)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half)
    with pytest.raises(WriteError, match="Pareto plot not written, the disk is full"):
        _plot(old, force=True)
    assert old.read_bytes() == b"the old plot"
    assert [p.name for p in tmp_path.iterdir()] == ["front.png"]

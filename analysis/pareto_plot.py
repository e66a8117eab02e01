"""Pareto-front plot (PNG): every method's front, the exact front and the reference point.

Written as every analysis output is (s47 tester N8, RX9): a file already at the path is
replaced only with ``force`` (checked before anything is drawn), and whole or not at all.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

MARKERS = ("o", "s", "^", "v", "D", "P", "X")


def plot_fronts(path: str, fronts: Mapping[str, np.ndarray], exact: np.ndarray | None,
                ref_point: Sequence[float], labels: Sequence[str] = ("runtime (s)", "energy (J)"),
                title: str = "", force: bool = False) -> str:
    """Write a 2-D Pareto plot.

    Args:
        path: PNG file to write.
        fronts: method name -> ``(k, 2)`` front found by that method.
        exact: ``(e, 2)`` exact front of the candidate set (or None).
        ref_point: ``(2,)`` fixed reference point used for every hypervolume.
        labels: axis labels (objective 0, objective 1).
        title: figure title.
        force: replace a file already at ``path`` (else refused, as every analysis output).

    Returns:
        ``path``.

    Raises:
        OutputError: (exit 2) a file is at ``path`` and not ``force``, or none can be written
            there; before anything is drawn.
    """
    from hpcds1mpi.atomic import atomic_path

    from .h1_results import check_files

    check_files([path], force, "path", "Pareto plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    if exact is not None and len(exact):
        ex = exact[np.argsort(exact[:, 0])]
        ax.step(ex[:, 0], ex[:, 1], where="post", color="0.6", lw=2.5, zorder=1,
                label=f"exact front ({len(ex)})")
    for k, (name, front) in enumerate(fronts.items()):
        if front is None or not len(front):
            continue
        fr = front[np.argsort(front[:, 0])]
        line = ax.step(fr[:, 0], fr[:, 1], where="post", lw=1.2, zorder=2)[0]
        ax.scatter(fr[:, 0], fr[:, 1], marker=MARKERS[k % len(MARKERS)], s=28,
                   color=line.get_color(), zorder=3, label=f"{name} ({len(fr)})")
    ax.scatter([ref_point[0]], [ref_point[1]], marker="*", s=160, color="k", zorder=4,
               label=f"reference point ({ref_point[0]:.3g}, {ref_point[1]:.3g})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        with atomic_path(path, "Pareto plot") as tmp:  # the format told by its kept suffix
            fig.savefig(tmp)
    finally:
        plt.close(fig)
    return path

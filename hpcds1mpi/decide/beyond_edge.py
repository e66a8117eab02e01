"""Beyond a workload's measured sizes, an answer never surer than the answer at their edge.

Past the largest (or below the smallest) size the bundle measured a workload at, System 1's
rules grow each configuration's edge run along measured slopes
(:mod:`~hpcds1mpi.surrogates.neighbour_beyond`), but its interval's width still mixed in the
model's width at the question, which the trees give from other leaves than at the edge: the
grow workload measured at 4000-16000 read 1.11 s (211 ms-1.26 s), confidence 0.54, at 16000
and 1.22 s (961 ms-1.39 s), confidence 0.79, at 16500 (s40 tester B2). And on hardware no run
measured nothing bounded it at all: the trees, flat beyond the sizes, read a program growing as
the size squared at 100x its largest size as 0.47 s (0.19-0.76 s) (s40 tester B4).

So the question is also scored at the edge (:func:`edge_size`, :func:`edge_frame`), and
:func:`hold_to_edge` keeps each candidate's relative runtime and energy intervals at least as
wide as the same candidate's there, and lets one with no measured edge of its own (hardware
never measured, a layout never run) grow from the edge's interval along the steepest measured
slope; System 1 caps the pick's confidence at the edge answer's (``system1.choose``).

The edge is a measured size, so its answer is the surest there is: a bundle of grow measured at
4000 and 8000 read 0.89 at 8000, 0.58 between them and 0.79 at 16000, 2x beyond them, where
every real run landed above the interval (s40 tester B7). An answer beyond the sizes is an
extrapolation, no surer than one between the two outermost sizes: the edge answer carries, as
its own ``edge``, the grid scored halfway (in log size) from the edge to the measured size
nearest it (:func:`inside_size`), and ``choose`` caps at that answer's confidence too.

Every question past the same edge, asked alike, shares one edge answer
(:func:`shared_edge_answer`): scored apart, it cost one more ``predict`` and a full scoring
per question, a batch of 20 such questions five times the time of 20 inside the sizes (s40
review F5).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from hpcds1mpi.surrogates.columns import distinct, is_columns, one_value
from hpcds1mpi.surrogates.neighbour_beyond import EDGE_SIZE
from hpcds1mpi.surrogates.neighbour_bounds import MAX_GROWTH
from hpcds1mpi.surrogates.repeat_spread import median_interval
from hpcds1mpi.surrogates.size_neighbours import config_codes


#: Edge answers kept per bundle (each a scored grid: tens of KB).
KEPT_EDGE_ANSWERS = 32


def edge_size(bundle, workload: str, size: int) -> int | None:
    """The workload's measured size nearest ``size`` where ``size`` lies outside all of them
    (``bundle.size_range``), else None (inside them, or a workload never measured)."""
    lo_hi = (getattr(bundle, "size_range", None) or {}).get(str(workload))
    if not lo_hi:
        return None
    lo, hi = (int(v) for v in lo_hi)
    if size > hi:
        return hi
    if size < lo:
        return lo
    return None


def inside_size(measured, workload: str, edge: float) -> int | None:
    """The size halfway in log size from the measured ``edge`` to the workload's measured size
    nearest it, on any hardware measured (``measured``: System 1's
    :class:`~hpcds1mpi.surrogates.neighbour_bounds.NeighbourRuntimes`); None where no other
    size was measured or none lies between the two."""
    sizes = [np.asarray(group[0], dtype=float) for (w, _), group in measured.groups.items()
             if w == str(workload)]
    sizes = np.unique(np.concatenate(sizes)) if sizes else np.zeros(0)
    others = sizes[(sizes > 0) & ~np.isclose(sizes, float(edge), rtol=1e-9, atol=0.0)]
    if not len(others) or not edge > 0:
        return None
    nearest = float(others[np.argmin(np.abs(np.log(others / float(edge))))])
    middle = int(round(math.sqrt(nearest * float(edge))))
    return middle if min(nearest, edge) < middle < max(nearest, edge) else None


def edge_frame(frame, edge: int, copy: bool = True):
    """A copy of the candidate table ``frame`` asked at size ``edge`` (None where it has no
    size column to change); ``copy=False``: a Columns ``frame``'s other columns are its own
    arrays, not copies (to be read only: a key's digest)."""
    if "size" not in frame.columns:
        return None
    out = frame[list(frame.columns)] if not copy and is_columns(frame) else frame.copy()
    out["size"] = np.full(len(out), int(edge), dtype=np.int64)
    return out


def steepest_growth(measured, workload: str, above: bool) -> float:
    """The steepest log-log slope of runtime with size the workload's configurations showed at
    the end asked (``above``: between their largest sizes), on any hardware measured;
    :data:`~hpcds1mpi.surrogates.neighbour_bounds.MAX_GROWTH` where none ran at two sizes."""
    slopes = [float(ends[1 if above else 0][2]) for (w, _), ends in measured.growths.items()
              if w == str(workload)]
    slopes = [s for s in slopes if math.isfinite(s)]
    return max(slopes) if slopes else MAX_GROWTH


def hold_to_edge(cols: dict, edge_cols: dict, size: float, edge: float,
                 steepest: float, kept: dict | None = None) -> None:
    """Widen, in place, the runtime and the energy interval of each candidate of ``cols``
    (System 1's columns at ``size``) found in ``edge_cols`` (the same grid scored at
    ``edge``): its relative width on each side at least the edge's median interval (without
    the edge runs' own repeats, which are one run's scatter, shown apart beyond the edge as the
    single-run band: :func:`~hpcds1mpi.surrogates.repeat_spread.median_interval`; the
    confidence is still no higher than the edge's as shown), and, for a candidate not
    held to a measured edge run of its own (no
    :data:`~hpcds1mpi.surrogates.neighbour_beyond.EDGE_SIZE`), its open end at least the
    edge's grown along ``steepest`` (above the sizes the upper end, below them the lower; the
    energy's too, the power taken as at the edge). The points are left as they are.
    (Energy held too: grow read 2.6-14.1 J at its edge and 10.7-22.5 J beyond it, s40
    review F4.)

    ``kept``: a dict kept with ``edge_cols`` where they are a shared, read-only edge answer
    (``Scores._caps``): what is read of them alone (whether their keys are unique, their
    median intervals) is kept there for the next question past the edge (issue 20)."""
    at, found = _edge_rows(cols, edge_cols, kept)
    if at is None:
        return
    own_edge = np.asarray(cols[EDGE_SIZE], dtype=float) if EDGE_SIZE in cols \
        else np.full(len(found), np.nan)
    factor = (float(size) / float(edge)) ** steepest
    for quantity, mid in (("runtime", "runtime_s"), ("energy", "energy_j")):
        low, high = f"{quantity}_lo", f"{quantity}_hi"
        point, lo, hi = (np.asarray(cols[c], dtype=float) for c in (mid, low, high))
        # the edge's median interval: one run's repeats there are noise, not its spread
        e_point, e_lo, e_hi = (end if at is _SAME_ROWS else end[at]
                               for end in _edge_interval(edge_cols, quantity, mid, kept))
        usable = found & np.isfinite(point) & (point > 0) & np.isfinite(e_point) & (e_point > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel_lo, rel_hi = e_lo / e_point, e_hi / e_point
            new_lo = np.where(usable & np.isfinite(rel_lo), np.fmin(lo, point * rel_lo), lo)
            new_hi = np.where(usable & np.isfinite(rel_hi), np.fmax(hi, point * rel_hi), hi)
            grown = usable & ~np.isfinite(own_edge)
            if size > edge:
                new_hi = np.where(grown & np.isfinite(e_hi), np.fmax(new_hi, e_hi * factor),
                                  new_hi)
            else:
                new_lo = np.where(grown & np.isfinite(e_lo), np.fmin(new_lo, e_lo * factor),
                                  new_lo)
        cols[low] = np.fmin(new_lo, point)
        cols[high] = np.fmax(new_hi, point)


#: :func:`_edge_rows`' ``at`` where every row of the question is the edge's same row.
_SAME_ROWS = slice(None)
#: The columns a question's row is matched to the edge's by (:func:`_keys`).
_MATCHED = ("partition", "nodes", "ranks_per_node", "threads", "device", "precision")


def _edge_rows(cols: dict, edge_cols: dict, kept: dict | None):
    """``(at, found)``: each row of ``cols``, the row of ``edge_cols`` with its partition and
    configuration (the first such where several have them), and whether there is one;
    ``(None, None)`` where ``edge_cols`` has no row. ``at`` is :data:`_SAME_ROWS` where the
    two tables list the same rows in the same order and the edge's keys are unique (the
    question's grid at another size, the usual case): nothing to sort or look up."""
    n, m = len(cols["nodes"]), len(edge_cols["nodes"])
    if not m:
        return None, None
    if n == m and kept is not None and all(_same_column(cols[c], edge_cols[c])
                                           for c in _MATCHED):
        unique = kept.get(("hold_to_edge", "unique keys"))
        if unique is None:
            keys = _keys(edge_cols, edge_cols)[0]
            unique = kept[("hold_to_edge", "unique keys")] = \
                len(np.unique(keys)) == len(keys)
        if unique:
            return _SAME_ROWS, np.ones(n, dtype=bool)
    here, there = _keys(cols, edge_cols)
    order = np.argsort(there, kind="stable")
    pos = np.clip(np.searchsorted(there[order], here), 0, m - 1)
    return order[pos], there[order][pos] == here


def _same_column(a, b) -> bool:
    """Whether two columns hold the same bytes (type, length and values)."""
    a, b = np.asarray(a), np.asarray(b)
    return a is b or (a.dtype == b.dtype and a.shape == b.shape and a.dtype != object
                      and a.tobytes() == b.tobytes())


def _edge_interval(edge_cols: dict, quantity: str, mid: str, kept: dict | None) -> tuple:
    """``(point, lo, hi)`` of ``quantity`` at the edge, its median interval
    (:func:`~hpcds1mpi.surrogates.repeat_spread.median_interval`); kept in ``kept``."""
    key = ("hold_to_edge", quantity)
    got = None if kept is None else kept.get(key)
    if got is None:
        got = (np.asarray(edge_cols[mid], dtype=float), *median_interval(edge_cols, quantity))
        if kept is not None:
            kept[key] = got
    return got


def shared_edge_answer(bundle, asked: tuple, table, compute):
    """The edge answer ``compute()`` gives for ``table`` (the edge grid as the bundle is asked
    it), computed once for every question asking it alike: ``asked`` (what else the scoring
    reads: workload, edge, partitions, constraints, limits) and the table's contents the key,
    in a bounded LRU kept with the bundle (:func:`~hpcds1mpi.decide.bundle_cache.memo`). A
    kept answer is shared, so read-only (``batch_memo.freeze``); None (no answer) is not
    kept."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.decide.batch_memo import Kept, freeze

    try:
        key = (asked, table_digest(table))
        hash(key)
    except TypeError:  # something in the question that cannot be a key: not shared
        return compute()
    kept = bundle_cache.memo(bundle, "edge_answers", lambda: Kept(KEPT_EDGE_ANSWERS))
    answer = kept.get(key)
    if answer is None:
        answer = compute()
        if answer is not None:
            kept.put(key, freeze(answer))
    return answer


def edge_confidence(edge, objective: str, model, choose) -> float | None:
    """The confidence of the pick ``choose(edge, objective, model)`` makes (None: nothing
    feasible there), kept on a shared (read-only) edge answer for each objective and
    confidence map: choosing it again for every question past the edge had been a fifth of
    System 1's own work on 11,595 candidates (issue 20)."""
    key = _map_key(objective, model) if edge.shared else None
    if key is not None and key in edge._caps:
        return edge._caps[key]
    at_edge = choose(edge, objective, model)
    cap = None if at_edge.index is None else at_edge.confidence
    if key is not None:
        edge._caps[key] = cap
    return cap


def _map_key(objective: str, model) -> tuple | None:
    """What a pick's confidence reads of ``model`` (its coefficients, whether calibrated,
    its inputs), with the objective; None for a map of another kind (not kept)."""
    from hpcds1mpi.decide.confidence import ConfidenceModel

    if type(model) is not ConfidenceModel:
        return None
    try:
        return (objective, tuple(float(c) for c in model.coef), bool(model.calibrated),
                None if model.inputs is None else tuple(model.inputs))
    except (TypeError, ValueError):
        return None


def table_digest(table) -> bytes:
    """A digest of a table's (Columns or DataFrame) column names, types and values."""
    digest = hashlib.blake2b(digest_size=16)
    for name in table.columns:
        col = np.asarray(table[name])
        if one_value(col):
            # one value throughout (the workload, size, hardware of a grid): hashed once, not
            # 10,000 times (issue 20); "=" and ";" tell the two forms apart
            digest.update(f"{name}:{col.dtype}:{len(col)}=".encode() + col[:1].tobytes())
            continue
        if col.dtype == object:
            digest.update(f"{name}:{col.dtype}:{len(col)};".encode())
            digest.update(repr(col.tolist()).encode())
            continue
        narrow = _narrow(col)  # the same values in fewer bytes, told apart by "~"
        digest.update(f"{name}:{col.dtype}:{len(col)}{'~' if narrow is not col else ';'}"
                      .encode())
        digest.update(np.ascontiguousarray(narrow).view(np.uint8))  # its bytes, no copy
    return digest.digest()


def _narrow(col: np.ndarray) -> np.ndarray:
    """``col`` in the fewest bytes that keep every value (integers in the narrowest signed
    type holding them, text whose characters are all below 256 as one byte each), else
    ``col``: one-to-one for a given dtype and length, so a digest of it tells the same
    tables apart. Hashing a grid's nodes, layout and text columns in full had been the
    larger part of the edge answer's key (0.6 MB per question on 11,595 candidates: issue
    20)."""
    if col.dtype.kind in "iu" and col.dtype.itemsize > 1 and len(col):
        lo, hi = int(col.min()), int(col.max())
        for small in (np.int8, np.int16, np.int32):
            info = np.iinfo(small)
            if small().itemsize < col.dtype.itemsize and info.min <= lo and hi <= info.max:
                return col.astype(small)
        return col
    if col.dtype.kind == "U" and col.dtype.itemsize and len(col):
        chars = np.ascontiguousarray(col).view(np.uint32)
        if int(chars.max()) < 256:
            return chars.astype(np.uint8)
    return col


def _keys(cols: dict, edge_cols: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(n,)`` and ``(m,)`` one key per candidate of each: equal keys, same partition and
    configuration. Integers (a partition's number among both tables' names, and the
    configuration's code) where they fit in int64: text keys had cost a third of System 1's
    own work on a 10,000-candidate grid (issue 20)."""
    parts = [np.asarray(c["partition"]).astype(str) for c in (cols, edge_cols)]
    codes = [config_codes(c) for c in (cols, edge_cols)]
    names = sorted(set(distinct(parts[0]).tolist()) | set(distinct(parts[1]).tolist()))
    top = max((int(np.abs(c).max()) for c in codes if len(c)), default=0)
    if top >= np.iinfo(np.int64).max // (len(names) + 1) - 1:  # would overflow: text keys
        return tuple(np.char.add(np.char.add(p, "|"), c.astype(str))
                     for p, c in zip(parts, codes))
    out = []
    for part, code in zip(parts, codes):
        number = np.zeros(len(part), dtype=np.int64)
        for i, name in enumerate(names[1:], start=1):
            number[part == name] = i
        out.append(code * len(names) + number)
    return out[0], out[1]


__all__ = ["KEPT_EDGE_ANSWERS", "edge_confidence", "edge_frame", "edge_size", "hold_to_edge",
           "inside_size", "shared_edge_answer", "steepest_growth", "table_digest"]

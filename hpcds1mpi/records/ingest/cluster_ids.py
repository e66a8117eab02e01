"""Job ids of several clusters in one export.

A slurmdbd serving several clusters (``sacct -M alpha,beta``, ``-L``) lists each cluster's
jobs under that cluster's own id counter, so one JobID can name two different jobs. The sacct
readers key a job by (cluster, id): the ``Cluster`` column of ``sacct -P``, ``cluster`` of
``--json`` ("" where the file names none), kept in the job table's ``cluster`` column. An id
that two clusters share is written qualified, ``alpha:8100``; every other id stays as sacct
wrote it (s37 tester J1, J2). Across files a job is (cluster, id) too, the qualifier not part
of the id: ``alpha:8100`` of a two-cluster export and ``8100`` of alpha's own export (or of
one without Cluster, matched to the cluster whose job has its user and name) are one job
(:func:`match_keys`; s37 had counted it twice).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

from .schema import FileReport

if TYPE_CHECKING:
    import pandas as pd

#: The job number an id begins with (``8100`` of ``8100_3``, ``8100+1``, ``8100.batch``).
_NUMBER = re.compile(r"\d+")


#: The note on ids qualified so.
QUALIFIED = ("id shared by two clusters' jobs (sacct -M: each cluster counts its own ids): "
             "both kept, job_id written CLUSTER:ID")


def shown_ids(keys, report: FileReport) -> dict[tuple[str, str], str]:
    """The job-table id of each (cluster, id) key: ``cluster:id`` where the id's job number
    is shared with another cluster's job in ``keys``, else the id itself; the jobs qualified
    are counted in ``report`` (:data:`QUALIFIED`)."""
    clusters: dict[str, set[str]] = defaultdict(set)
    for cluster, jid in keys:
        clusters[_number(jid)].add(cluster)
    shown = {(cluster, jid): (f"{cluster}:{jid}" if cluster and len(clusters[_number(jid)]) > 1
                              else jid)
             for cluster, jid in keys}
    qualified = sum(key[1] != value for key, value in shown.items())
    if qualified:
        report.notes[QUALIFIED] += qualified
    return shown


def _number(jid: str) -> str:
    m = _NUMBER.match(jid)
    return m.group(0) if m else jid


#: A job id a reader qualified with its cluster: ``alpha:8100`` (Slurm's own ids hold no ':').
_QUALIFIED_ID = re.compile(r"(?P<cluster>[^:\s]+):(?P<id>\d.*)")


def match_keys(table: "pd.DataFrame", slurm: "pd.Series", ids=None) -> "pd.Series":
    """The key several files' copies of one job share: ``cluster\0id`` for the Slurm rows
    (``slurm``), the id (``ids``, else the job id) without a cluster qualifier; the job id
    for the others.

    A copy's cluster is its ``cluster``, else its id's qualifier (a job table written before
    the column), else the cluster of the job of that id in another file: the only cluster
    that has the id, or of several the one whose job has this copy's user and name (nearest
    by submit time). Otherwise it stays "" (one cluster's export without Cluster matched
    only with others like it). ``table["cluster"]`` gains the qualifiers read.
    """
    import pandas as pd

    ids = (table["job_id"] if ids is None else ids).astype("string").fillna("")
    parts = ids[slurm].str.extract(_QUALIFIED_ID.pattern)
    qualified = parts["id"].notna()
    bare = ids.copy()
    bare[qualified[qualified].index] = parts.loc[qualified, "id"]
    cluster = table["cluster"].astype("string").replace("", pd.NA)
    cluster = cluster.fillna(parts["cluster"].reindex(table.index))
    table["cluster"] = cluster.where(slurm, table["cluster"])
    unknown = slurm & cluster.isna()
    known = slurm & cluster.notna()
    if unknown.any() and known.any():
        cluster = cluster.fillna(_other_files_cluster(table, bare, cluster, unknown, known))
    key = cluster.fillna("") + "\0" + bare
    return key.where(slurm, table["job_id"].astype("string").fillna(""))


def _other_files_cluster(table, bare, cluster, unknown, known) -> "pd.Series":
    """For the rows ``unknown`` (no cluster), the cluster of the ``known`` row of the same id
    that is their job: the only cluster of that id, else the one whose copy has their user
    and job name, nearest in submit time (none found: not in the result)."""
    import pandas as pd

    who = ["user", "workload"]
    values = table[who].astype("string").replace("", pd.NA)
    left = values[unknown].assign(_id=bare[unknown], _at=table.loc[unknown, "submit_time"])
    right = values[known].add_prefix("_their_").assign(
        _id=bare[known], _cluster=cluster[known], _their_at=table.loc[known, "submit_time"])
    pairs = left.reset_index(names="index").merge(right, on="_id")
    if pairs.empty:
        return pd.Series(dtype="string")
    clusters = pairs.groupby("index")["_cluster"].transform("nunique")
    agree = pd.Series(True, index=pairs.index)
    for c in who:  # an unknown value (a -P export without User) is no disagreement
        agree &= (pairs[c].isna() | pairs[f"_their_{c}"].isna()
                  | pairs[c].eq(pairs[f"_their_{c}"])).fillna(True).astype(bool)
    pairs = pairs[clusters.eq(1) | agree].assign(
        _apart=(pairs["_at"] - pairs["_their_at"]).abs())
    best = pairs.sort_values("_apart", na_position="last", kind="stable").drop_duplicates("index")
    return best.set_index("index")["_cluster"]


def qualify_shared(table: "pd.DataFrame", slurm: "pd.Series", key: "pd.Series", notes) -> None:
    """Write ``CLUSTER:ID`` the Slurm jobs of ``table`` whose id (``key``'s, unqualified) two
    clusters' jobs share, as a reader does within one file (two files of one cluster each,
    or a copy kept from a file that named no other cluster); counted in ``notes``."""
    import pandas as pd

    bare = key[slurm].str.split("\0", n=1).str[1]
    cluster = table.loc[slurm, "cluster"].astype("string").replace("", pd.NA)
    number = bare.str.extract(r"^(\d+)", expand=False).fillna(bare)
    shared = cluster.groupby(number).transform("nunique").gt(1) & cluster.notna()
    shown = (cluster + ":" + bare).where(shared, table.loc[slurm, "job_id"])
    changed = shown.ne(table.loc[slurm, "job_id"]).fillna(False).astype(bool)
    if changed.any():
        table.loc[changed[changed].index, "job_id"] = shown[changed]
        notes[QUALIFIED + " (across files)"] += int(changed.sum())

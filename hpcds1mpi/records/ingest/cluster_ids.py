"""Job ids of several clusters in one export.

A slurmdbd serving several clusters (``sacct -M alpha,beta``, ``-L``) lists each cluster's
jobs under that cluster's own id counter, so one JobID can name two different jobs. The sacct
readers key a job by (cluster, id): the ``Cluster`` column of ``sacct -P``, ``cluster`` of
``--json`` ("" where the file names none). In the job table, which has no cluster column, an
id that two clusters of one file share is written qualified, ``alpha:8100``; every other id
stays as sacct wrote it, so the same job read from another export (one cluster's, or one
without Cluster) is still the same id (s37 tester J1, J2).
"""

from __future__ import annotations

import re
from collections import defaultdict

from .schema import FileReport

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

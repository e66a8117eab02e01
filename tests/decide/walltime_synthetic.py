"""A small synthetic SWF history for walltime tests (s39 tester C's generator): user 1, 224
steady ~600-s jobs asking 3,600 s; user 2, one job; user 3, two; user 4, 20 jobs all killed at
their 1,800-s limit; user 5, 20 failed jobs; users 10-19, filler asking 7,200 s."""

from __future__ import annotations

import random
from pathlib import Path


def write_log(path: Path, seed: int = 1) -> Path:
    """Write the log to ``path`` (SWF) and return it."""
    rng = random.Random(seed)
    jobs, t = [], 0

    def add(user, run, req, procs=2, status=1, part=1):
        nonlocal t
        t += rng.randint(30, 400)
        jobs.append((t, run, procs, req, status, user, part))

    for _ in range(600):
        r = rng.random()
        if r < 0.35:
            add(1, int(rng.gauss(600, 30)), 3600)
        elif r < 0.4 and sum(j[5] == 4 for j in jobs) < 20:
            add(4, 1800 + rng.randint(0, 5), 1800, status=0)
        elif r < 0.45 and sum(j[5] == 5 for j in jobs) < 20:
            add(5, rng.randint(5, 50), 3600, status=0)
        else:
            u = rng.randint(10, 19)
            add(u, int(rng.lognormvariate(6 + (u % 3), 0.8)), 7200,
                procs=rng.choice([1, 2, 4, 8]))
    add(2, 900, 3600), add(3, 1000, 3600), add(3, 1100, 3600)
    lines = ["; Version: 2.2", "; UnixStartTime: 1400000000", "; TimeZoneString: UTC"]
    lines += [f"{n} {s} 10 {run} {procs} -1 -1 {procs} {req} -1 {st} {u} 1 1 1 {part} -1 -1"
              for n, (s, run, procs, req, st, u, part) in enumerate(jobs, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def history(path: Path):
    """The log written to ``path``, ingested (a job table)."""
    from hpcds1mpi.records.ingest import read_job_log

    return read_job_log(write_log(path))[0]

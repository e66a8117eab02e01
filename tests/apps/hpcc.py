"""HPCC's input deck and the sweep arguments the real-application tests and benchmark share.

HPCC (Debian package ``hpcc``, linked against Open MPI) reads ``hpccinf.txt`` from its working
folder and appends its report to ``hpccoutf.txt`` there. Each (size, ranks) gets a folder
whose deck asks HPL for one N on a 1 x ranks grid; the sweep runs each configuration in its
folder (``--workdir``) and reads the report (``--output-file``).
"""

from __future__ import annotations

from pathlib import Path

DECK = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
{count}            # of problems sizes (N)
{ns}          Ns
1            # of NBs
32           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""

#: HPL's own time and rate (Tflop/s) from HPCC's summary (its fastest solve), HPCC's rank count.
TIME_REGEX = r"HPL_time=([0-9.eE+-]+)"
FOM_REGEX = r"HPL_Tflops=([0-9.eE+-]+)"
RANKS_REGEX = r"CommWorldProcs=(\d+)"


#: HPL solves of N per launch. HPCC reports the fastest solve of its deck as ``HPL_time`` (and
#: its rate as ``HPL_Tflops``): one solve of 5-30 ms caught by another process's time slice
#: reads tens of percent slow, the fastest of 8 in one launch rarely (8 solves add 0.05-0.3 s
#: to a launch of 0.5-1 s, most of it MPI start-up and HPCC's other tests).
SOLVES = 8


def deck(n: int, q: int, solves: int = SOLVES) -> str:
    """HPCC's input: HPL at order ``n`` on a 1 x ``q`` grid, solved ``solves`` times."""
    if not 1 <= solves <= 20:  # HPL reads at most 20 problem sizes
        raise ValueError(f"solves {solves}: HPL takes 1 to 20 problem sizes")
    return DECK.format(count=solves, ns=" ".join([str(n)] * solves), q=q)


def write_decks(root: Path, sizes, ranks=(1, 2), solves: int = SOLVES) -> None:
    """``root/{size}-{ranks}/hpccinf.txt`` for every size and rank count."""
    for n in sizes:
        for q in ranks:
            folder = root / f"{n}-{q}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "hpccinf.txt").write_text(deck(n, q, solves))


def sweep_args(root: Path, mpiexec: str, *, repeats: int = 2,
               launcher_args: str | None = "--mca mpi_yield_when_idle 1") -> list[str]:
    """``hpcds1mpi sweep`` arguments for HPCC over ranks 1,2 x threads 1,2 (add --sizes/--out).

    ``mpi_yield_when_idle``: on a shared machine Open MPI's busy polling of idle ranks would
    slow the other rank (a launcher option, given as --launcher-args)."""
    extra = ["--launcher-args", launcher_args] if launcher_args else []
    return ["sweep", "--command", "hpcc", "--label", "hpcc", "--workdir",
            str(root / "{size}-{ranks}"), "--output-file", "hpccoutf.txt",
            "--ranks-per-node", "1,2", "--threads", "1,2", "--time-regex", TIME_REGEX,
            "--fom-regex", FOM_REGEX, "--ranks-regex", RANKS_REGEX, "--mpiexec", mpiexec,
            *extra, "--min-repeats", str(repeats), "--max-repeats", str(repeats),
            "--min-time", "0", "--no-progress"]

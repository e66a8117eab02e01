"""What a batch script asks for, and where each part of it is written.

A :class:`JobScript` is what :func:`hpcds1mpi.launch.script_reading.read_script` makes of a
Slurm or PBS script: its directives, its :class:`Launch` lines, the variables it sets
(:class:`Setting`) and the layout they add up to, each with the lines and text offsets it was
read from, so :mod:`hpcds1mpi.launch.script_rewrite` can edit exactly those places.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_expansion import expand
from hpcds1mpi.launch.script_options import Option, count_range, range_note

#: The most notes one script gets: a script of thousands of unread lines would otherwise
#: print thousands of them.
MAX_NOTES = 50


@dataclass
class Launch:
    """One line that starts MPI ranks (continuations joined).

    Attributes:
        launcher: the command (``srun``, ``mpirun``, ...); kind: its option table.
        line / last_line: where it starts and ends; span: the launcher word's span.
        options: canonical name -> the last occurrence; env: variables set for the ranks on
            this line (``VAR=x srun``, ``-x``, ``-env``, ``--export``), name -> (value, Option).
        program / args: what is launched, with ``$`` expanded (None when unresolved);
            program_raw: the program word unexpanded; scope: the variables known there.
        spans: (start, end, as written) of the program word and of each of ``args``.
        in_loop: inside a ``for`` / ``while`` / ``until`` / ``select`` loop (run repeatedly).
        stdin: the line's standard-input redirection as written (``< si-30.in``, ``<<EOF``),
            "" for none: the program reads its input there, which is not read.
        then: the words the line runs after the launch (``; ./post 9``, ``| tee log``), from
            the separator on: the job's run time may be theirs too.
        origin: (the scheduler's variables, the script's assignments, how many of those come
            before this line), from which :attr:`scope` is rebuilt when asked for.
        wrapper_unset / wrapper_cleared: the variables an ``env -u NAME`` before the program
            removes, and whether ``env -i`` clears them all: the script's own settings do not
            reach the program then (s30 tester R6).
        options_at: the offset where an option of the launcher's is added: after the
            launcher word, or after the rank count of a wrapper that reads it first
            (``cafrun -n 4``: :data:`~hpcds1mpi.launch.script_options.RANKS_FIRST`).
        mca: the MCA parameters an Open MPI launcher is given (``--mca`` / ``-mca`` /
            ``--gmca NAME VALUE``), name -> value with ``$`` expanded (None: unresolved);
            ``options`` keeps the last ``mca`` alone.
    """

    launcher: str
    kind: str
    line: int
    last_line: int
    span: tuple[int, int]
    options: dict[str, Option] = field(default_factory=dict)
    env: dict[str, tuple[str | None, Option]] = field(default_factory=dict)
    program: str | None = None
    args: list[str] = field(default_factory=list)
    program_raw: str = ""
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    in_loop: bool = False
    stdin: str = ""
    then: tuple[str, ...] = ()
    origin: tuple[dict, list, int] = field(default_factory=lambda: ({}, [], 0), repr=False,
                                           compare=False)
    wrapper_unset: tuple[str, ...] = ()
    wrapper_cleared: bool = False
    options_at: int | None = None
    mca: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.options_at is None:
            self.options_at = self.span[1]

    @property
    def scope(self) -> "Mapping[str, str]":
        """The variables known at this line, a read-only view of the assignments before it
        (:class:`~hpcds1mpi.launch.script_scope.ScopeView`): neither a copy kept per launch
        line (gigabytes for a 256 kB script that alternates the two) nor one rebuilt each time
        (launch lines x assignments of time)."""
        from hpcds1mpi.launch.script_scope import ScopeView

        return ScopeView(*self.origin, at=self.span[0])

    def value(self, name: str, scope: dict) -> str | None:
        """An option's value with ``$`` expanded (None when absent or unresolved)."""
        opt = self.options.get(name)
        return None if opt is None or opt.value is None else expand(opt.value, scope)


@dataclass
class Setting:
    """A variable the script assigns (``X=1``, ``export X=1``) and where its value is.

    ``subshell``: for one made in a subshell (``( export X=8; ./prep )``, a pipeline stage,
    ``X=8 &``, ``{ ...; } &``: s45 tester F3), (the place in the
    script's assignments of the one of its name it hid, -1 for none, the text offset of the
    subshell's closing ``)``, where it ends); None for the script's own, and in a subshell
    not closed.
    """

    name: str
    value: str
    resolved: str | None
    line: int
    value_span: tuple[int, int]
    subshell: tuple[int, int] | None = None

    def reaches(self, at: int) -> bool:
        """Whether this assignment still holds at text offset ``at`` (one after it): a
        subshell's end with its closer (s45 S1)."""
        return self.subshell is None or at < self.subshell[1]


@dataclass
class Unset(Setting):
    """An ``unset NAME`` the script runs, as a :class:`Setting` without a value: its
    ``value_span`` is the place it runs at (its own, or the call of the function whose body
    runs it), ``subshell`` where that subshell ends it, and ``conditional`` where it runs
    only under a condition (an ``if`` branch, a ``case`` arm, a loop, after ``&&`` /
    ``||``): such a one may leave the variable set (s46 review RV8)."""

    conditional: bool = False


@dataclass
class JobScript:
    """What a batch script asks for, and where each part of it is written.

    Attributes:
        text: the script; scheduler: ``slurm`` or ``pbs``.
        directives: canonical name -> the option that counts (the last one).
        ignored: line numbers of directives after the first command (schedulers skip them).
        first_command: line of the first command (directives end there), None if none.
        directives_end: text offset just after the last counted directive line.
        launches: every launch line; settings: the script's assignments in order.
        nodes / ntasks / ntasks_per_node / cpus_per_task / threads / gpus_per_node / time_s /
            partition / account / job_name: what it asks for (None: not said).
        step_gpus: the ``srun`` option that asks GPUs for the step (None: the job's are used).
        command: the program's measured command line, where the model keeps one (``{threads}``
            in it shows the program's own thread option); set by ``advise``.
        lines: value name -> the line numbers it was read from.
        notes: what the reader assumed or could not resolve, one line each.
        warnings: what makes the job fail or run otherwise than measured, read with its
            layout (its program's thread option against OMP_NUM_THREADS,
            :mod:`~hpcds1mpi.launch.thread_mismatch`); ``advise`` says them as warnings.
    """

    text: str
    scheduler: str
    directives: dict[str, Option] = field(default_factory=dict)
    ignored: list[int] = field(default_factory=list)
    first_command: int | None = None
    directives_end: int = 0
    launches: list[Launch] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)
    select: dict[str, Option] = field(default_factory=dict)
    nodes: int | None = None
    ntasks: int | None = None
    ntasks_per_node: int | None = None
    cpus_per_task: int | None = None
    threads: int | None = None
    gpus_per_node: int = 0
    step_gpus: Option | None = None
    command: str | None = None
    time_s: int | None = None
    partition: str | None = None
    account: str | None = None
    job_name: str | None = None
    launch: Launch | None = None
    scope: dict = field(default_factory=dict)
    lines: dict[str, list[int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    base: tuple | None = None
    #: The ``srun --mpi=`` value the program's MPI needs where the script's srun lacks it
    #: (set by advise's launch check, read by ``--rewrite``; s32 tester U5).
    srun_mpi_fix: str | None = None
    noted: set[str] = field(default_factory=set, repr=False)
    #: Each ``unset NAME`` run outside a function body or where one is called: what a
    #: setting before it no longer gives a launch after it that it reaches (s45 tester F4,
    #: :class:`Unset`).
    unsets: list[Unset] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a note once; past :data:`MAX_NOTES`, one line says the rest were left out."""
        if text in self.noted or len(self.noted) > MAX_NOTES:
            return
        self.noted.add(text)
        self.notes.append(text if len(self.noted) <= MAX_NOTES else
                          f"more than {MAX_NOTES} notes; the rest are left out")

    def written(self, opt: Option) -> str:
        """``opt`` as the script spells it, on one line: a ``\\``-continued option's newline
        and indent would otherwise land inside a one-line warning (s43 review R12)."""
        return " ".join(self.text[opt.span[0]:opt.span[1]].replace("\\\n", " ").split())

    def warn(self, text: str) -> None:
        """Add a warning once (the launch line is read again for each launch advise tries)."""
        if text not in self.warnings:
            self.warnings.append(text)

    def settings_before(self, launch: Launch | None, line: int = 10 ** 9) -> list[Setting]:
        """The script's assignments on ``launch``'s line or before it that still hold at the
        launch; without one, those on ``line`` or before (the script's end by default) that
        hold at its start. A subshell's end with it (``( export OMP_NUM_THREADS=8; ./prep
        )`` sets none for a later ``srun``, s45 S1; nor does a pipeline stage or a background
        job, s45 tester F3): the one rule of every reader of what a launch inherits."""
        if launch is not None:
            line, at = launch.line, launch.span[0]
        else:
            at = _line_start(self.text, line)
        return [s for s in self.settings if s.line <= line and s.reaches(at)]

    def where(self, key: str, line: int | None) -> None:
        if line is not None and line not in self.lines.setdefault(key, []):
            self.lines[key].append(line)

    @property
    def device(self) -> str:
        """The device the GPUs asked for imply; the program may say otherwise
        (:func:`~hpcds1mpi.launch.script_request.device_of`)."""
        return "gpu" if self.gpus_per_node else "cpu"

    def layout(self, cores_per_node: int | None = None) -> tuple[int, int, int]:
        """(nodes, ranks per node, threads) as the scheduler would give them.

        ``--ntasks`` without ``--nodes`` gets the fewest nodes that hold the tasks (and their
        CPUs: one a task without ``--cpus-per-task`` in Slurm, whatever the threads), so it
        needs ``cores_per_node``. A ``--nodes`` range gets as many nodes as it
        allows, one task each at most, and at least those the tasks need (as ``sbatch`` gives
        them where nodes are free); fewer ranks than nodes run on one node each.

        Raises:
            ConfigError: the script leaves the node count open and no core count was given.
        """
        threads = self.threads or 1
        # ranks one node holds: a rank's CPUs are on one node (s29 tester D4: 8 ranks of 4
        # CPUs on 2-core nodes were read as 16 nodes x 1 rank); without --cpus-per-task Slurm
        # gives a task 1 CPU whatever OMP_NUM_THREADS says (s45 tester B1: `-n 2` with 2
        # threads was read as 2 nodes x 1 rank; Slurm packs both on one 2-core node)
        cpus = self.cpus_per_task or (1 if self.scheduler == "slurm" else threads)
        fit = max(1, cores_per_node // cpus) if cores_per_node else None
        if cores_per_node and self.cpus_per_task and self.cpus_per_task > cores_per_node:
            at = self.lines.get("threads", [])
            self.note(f"{f'line {at[0]}: ' if at else ''}{self.cpus_per_task} CPUs per task "
                      f"are more than a node's "
                      f"{cores_per_node} cores: Slurm refuses the job (a task's CPUs are on "
                      "one node); counted 1 rank per node")
        span = self._node_range()
        nodes = self.nodes
        if nodes is None or span:
            if self.ntasks and self.ntasks_per_node:
                nodes = -(-self.ntasks // self.ntasks_per_node)
            elif self.ntasks and (fit or span):
                need = -(-self.ntasks // fit) if fit else 1
                nodes = max(need, min(span[1], self.ntasks)) if span else need
            elif self.ntasks:
                raise ConfigError("the script gives --ntasks without --nodes; the node "
                                  "count depends on the partition's cores (pass --cluster)")
            else:
                nodes = span[1] if span else 1
            if span:
                nodes = min(max(nodes, span[0]), span[1])
                self._range_read(span, nodes, cores_per_node)
        ranks = self.ntasks or (nodes * self.ntasks_per_node if self.ntasks_per_node
                                else nodes)
        if ranks < nodes:  # s29 tester D3: "1 ranks ... over 2 nodes; counted 1 per node"
            self.note(f"{ranks} rank{'s' if ranks > 1 else ''} cannot fill {nodes} nodes: "
                      f"{'they run' if ranks > 1 else 'it runs'} on {ranks} "
                      f"node{'s' if ranks > 1 else ''} (Slurm: \"can't run {ranks} processes "
                      f"on {nodes} nodes\"), which is read")
            nodes = ranks
        per_node = -(-ranks // nodes)
        if per_node * nodes != ranks:
            self.note(f"{ranks} ranks do not divide evenly over {nodes} nodes; counted "
                      f"{per_node} per node")
        return nodes, per_node, threads

    def _node_range(self) -> tuple[int, int] | None:
        """(minimum, maximum) of a ``--nodes`` range directive that gives the node count read
        (no launch line sets its own), else None."""
        opt = self.directives.get("nodes") if self.scheduler == "slurm" else None
        span = count_range(opt.value) if opt is not None else None
        step = self.launch is not None and self.launch.kind == "slurm" \
            and "nodes" in self.launch.options
        if span is None or span[0] >= span[1] or step or self.nodes != span[0]:
            return None
        return span

    def _range_read(self, span: tuple[int, int], nodes: int, cores: int | None) -> None:
        """Say which node count of a range is read, in place of the reader's note that its
        minimum is."""
        opt = self.directives["nodes"]
        old = range_note(opt.line, "nodes", opt.value)
        new = (f"line {opt.line}: nodes {opt.value.strip()} is a range: Slurm gives as many "
               f"nodes as are free within it, at most one per task and at least those the "
               f"tasks need{f' on {cores}-core nodes' if cores else ''}; {nodes} is read")
        # the reader's note, or this one read for other cores (rank_proof reads the layout
        # without them first): one note says the range (s38 tester D7)
        said = [n for n in self.notes if n == old or n.startswith(new.split(" is a range:")[0]
                                                                  + " is a range: Slurm gives")]
        if said:
            self.noted.difference_update(said)
            self.noted.add(new)
            self.notes[self.notes.index(said[0])] = new
            self.notes[:] = [n for n in self.notes if n not in said[1:]]
        else:
            self.note(new)


def _line_start(text: str, line: int) -> int:
    """The text offset where line ``line`` (from 1) starts; the text's end past its last."""
    at = 0
    for _ in range(line - 1):
        at = text.find("\n", at) + 1
        if not at:
            return len(text)
    return at

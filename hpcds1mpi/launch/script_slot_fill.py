"""Where a job script's ``mpirun -n N`` puts its ranks when it names no ranks per node.

Open MPI's ``mpirun`` (4.1's ORTE, 5's PRRTE) and hydra (MPICH, Intel MPI) map by slot: inside
a job they fill each node's slots (its tasks per node: ``--ntasks-per-node``, PBS's
``mpiprocs``) before the next node, and a host list's ``n1:2`` gives ``n1`` two slots. So
``mpirun -n 2`` in a 2-node job of 2 tasks per node runs both ranks on the first node, the
second idle (measured under Open MPI 5.0.11, 4.1.4 and MPICH's hydra); it had been read as 2
nodes x 1 rank (s40 tester A8). :func:`slot_fill` gives the layout that runs, with a note;
a launch that spreads its ranks itself (``--map-by node`` / ``ppr:``, ``--pernode``,
``--bynode``, hydra's ``-rr``, a ranks-per-node option) or takes a host file is left to the
other readers.

A host named twice in a host list is one node with a slot per mention, not two nodes (s41
tester B10: ``mpirun -n 2 --host n1,n1`` was read as 2 nodes x 1 rank). Open MPI (4.1.4, in a
1-node salloc) adds every mention's slots to the host's first: ``n1,n1`` is ``n1:2`` and
``n1,n2,n1`` gives n1 ranks 0 and 1. Hydra (MPICH 4.0.2's ``-verbose``) joins only mentions
side by side and fills the list as written: ``n1,n2,n1`` puts rank 1 on n2. Where the two
place the ranks otherwise, the list is not read (a note says how to write it).

Without ``-n``, both start a rank on every slot of the host list (s42: ``--host n1,n1`` runs
2, ``n1:2,n2:2`` 4; Open MPI 4.1.4 in a 2-node salloc, MPICH 5.0.2's hydra). More ranks than
the list's slots: hydra deals them round the list again (``n1:2,n2:2 -n 6``: 4 on n1, 2 on
n2); Open MPI refuses ("not enough slots") unless told ``--oversubscribe``, then spreads what
is over the slots evenly, the first hosts one more (3 and 3).

Without ``-n`` under a launch that spreads its ranks (s43, measured in a 2-node salloc of 2
tasks per node: Open MPI 4.1.4, MPICH 5.0.2's hydra, Intel MPI's hydra with ``-bootstrap
slurm``): ``--map-by node`` still starts a rank on every slot (``n1,n2``: 1 + 1, ``n1:2,n2:2``:
2 + 2, ``n1,n2,n1``: 2 on n1, 1 on n2); K ranks per node (hydra's ``-ppn K``, Open MPI's
``-npernode K``, ``--map-by ppr:K:node``, ``--pernode`` for 1) start K on each host of the list
(``n1:2,n2:2 -ppn 1``: 2, ``n1,n2 -ppn 2``: 4 under hydra, which ignores the slots; Open MPI
refuses K over a host's slots, "not enough slots", and joins a host named again:
``n1,n2,n1 -npernode 1``: 2).

More ranks than the hosts hold at hydra's ``-ppn K`` (or one each under Intel MPI's ``-rr``):
hydra deals blocks of K round the hosts again (s44, MPICH 5.0.2's hydra in a 2-node salloc:
``-ppn 1 -n 4`` runs 2 + 2, ``-ppn 2 -n 6`` 4 + 2); Open MPI's ``-npernode K`` refuses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: ``--map-by`` policies that place ranks within a node's slots before the next node (slot,
#: Open MPI's default, and the units inside a node); ``node`` and ``ppr:`` spread them.
_FILLING = {"slot", "core", "hwthread", "socket", "package", "numa", "board", "l1cache",
            "l2cache", "l3cache"}
#: Options by which a launch spreads its ranks over the nodes itself (as the reader names them).
#: ``--npersocket K`` runs K on each socket (Open MPI 4.1.4 on a 1-socket node of 2 slots:
#: one rank), not one per slot (s43 tester J4).
_SPREADING = ("pernode", "bynode", "rr", "hostfile", "npersocket")


def _host_slots(value: str) -> list[tuple[str, int]] | None:
    """(host, slots) of each item of a host list as written (``n1:2,n2``: [("n1", 2), ("n2",
    1)]); None where it is not one written out (a variable left in it, a count that is no
    number)."""
    slots = []
    for item in value.split(","):
        name, _, count = item.strip().partition(":")
        if not name or "$" in item or (count and not count.isdigit()):
            return None
        slots.append((name, int(count) if count else 1))
    return slots


def host_slots(value: str, joined: bool = False) -> list[tuple[str, int]] | None:
    """(host, slots) of host list ``value`` (:func:`_host_slots`), a host named again added to
    its first mention where ``joined`` (as Open MPI reads it)."""
    items = _host_slots(value)
    return _joined(items, anywhere=True) if items and joined else items


def _joined(items: list[tuple[str, int]], anywhere: bool) -> list[tuple[str, int]]:
    """``items`` with a host named again added to its first mention (Open MPI), or, where not
    ``anywhere``, only to the mention just before it (hydra)."""
    out: list[tuple[str, int]] = []
    for name, count in items:
        at = next((k for k, (n, _) in enumerate(out) if n == name), None) if anywhere else \
            (len(out) - 1 if out and out[-1][0] == name else None)
        if at is None:
            out.append((name, count))
        else:
            out[at] = (name, out[at][1] + count)
    return out


def _filled(slots: list[tuple[str, int]], ranks: int) -> list[int]:
    """The ranks each host of ``slots`` runs when ``ranks`` fill them in order, by host."""
    per_host: dict[str, int] = {}
    left = ranks
    for name, slot in slots:
        placed = min(slot, left)
        per_host[name] = per_host.get(name, 0) + placed
        left -= placed
    return list(per_host.values())


def _job_slots(nodes: int | None, tasks: int | None, per_node: int | None
               ) -> list[int] | None:
    """The slots of each of the job's nodes: its tasks per node, or its tasks spread as the
    scheduler spreads them (the first nodes one more); None where the node count is not known."""
    if not nodes:
        return None
    if per_node:
        return [per_node] * nodes
    tasks = tasks or nodes
    return [tasks // nodes + (1 if k < tasks % nodes else 0) for k in range(nodes)]


def _fills_slots(launch: "Launch") -> bool:
    """Whether ``launch`` (``mpirun`` / ``mpiexec``) places its ranks slot after slot, not
    spreading them itself."""
    if launch.kind != "mpi" or any(o in launch.options for o in _SPREADING):
        return False
    mapping = launch.options.get("map-by")
    policy = ((mapping.value or "") if mapping is not None else "slot").split(":")[0].lower()
    return policy in _FILLING


def ranks_per_host(launch: "Launch", per_node: int | None, ranks: int | None = None,
                   nodes: int | None = None) -> int | None:
    """The ranks ``launch`` starts on each host by its own word: ``per_node`` (its ``-ppn``,
    ``-npernode``, ``ppr:K:node``), 1 for ``--pernode`` and for Intel MPI's ``-rr`` where its
    ``ranks`` (``-n``) are absent or no more than the hosts it deals them round (s44, measured
    in a 2-node salloc of 2 tasks per node: ``-n 2`` and no ``-n`` run 1 + 1; more ranks:
    :func:`round_robin`; the launchers that stop at it are warned of:
    :mod:`~hpcds1mpi.launch.placement_spelling`); None where it names none."""
    if per_node or launch.kind != "mpi":
        return per_node
    if "pernode" in launch.options:
        return 1
    if "rr" in launch.options:
        hosts = _dealt_hosts(launch, nodes)
        return 1 if ranks is None or hosts is None or ranks <= hosts else None
    return None


def _dealt_hosts(launch: "Launch", nodes: int | None) -> int | None:
    """The hosts ``-rr`` deals ranks round: its host list's (a host named again once), else
    the job's ``nodes``; None where not known (a variable in the list, no node count)."""
    hosts = launch.options.get("host")
    if hosts is None:
        return nodes
    items = _host_slots(hosts.value or "")
    return len(_joined(items, anywhere=True)) if items else None


def _deal(script: "JobScript", launch: "Launch", ranks: int, hosts: int, block: int,
          how: str) -> tuple[int, int]:
    """(hosts, ranks on the fullest) of hydra dealing ``ranks`` round ``hosts`` in blocks of
    ``block`` again and again: rank i on host (i // block) % hosts. An uneven deal is noted
    as read approximately, ``how`` naming the launch's words that deal them."""
    cycles, rest = divmod(ranks, hosts * block)
    counts = [cycles * block + min(block, max(0, rest - h * block)) for h in range(hosts)]
    counts = [c for c in counts if c]
    if len(set(counts)) > 1:
        over = "its host list's hosts" if "host" in launch.options else "the job's nodes"
        script.note(f"line {launch.line}: {launch.launcher} {how} deals its ranks round "
                    f"{over}: {', '.join(map(str, counts))} on its {len(counts)}, an uneven "
                    "layout, which a model of even layouts (nodes x ranks per node) reads only "
                    f"approximately (as {len(counts)} x {-(-ranks // len(counts))}); give -n a "
                    f"multiple of {hosts * block} for an answer about what runs")
    return len(counts), counts[0]


def round_robin(script: "JobScript", launch: "Launch", ranks: int,
                nodes: int | None) -> tuple[int, int] | None:
    """(hosts, ranks on the fullest) of Intel MPI's ``-rr`` dealing more ``ranks`` than it
    has hosts (its host list's, else the job's ``nodes``) round them again: Intel MPI's
    ``mpiexec -n 4 -rr`` in a 2-node salloc runs 2 + 2 (measured, s44); it had been read as 4
    nodes x 1 (s44 review R5). An uneven deal (``-n 3``: 2 + 1) is noted as read
    approximately; None where it names no ``-rr`` or the hosts are not known."""
    if launch.kind != "mpi" or "rr" not in launch.options:
        return None
    hosts = _dealt_hosts(launch, nodes)
    if not hosts or ranks <= hosts:
        return None
    return _deal(script, launch, ranks, hosts, 1, f"-n {ranks} -rr")


def wrapped_per_node(script: "JobScript", launch: "Launch", ranks: int, per_node: int,
                     nodes: int | None) -> tuple[int, int] | None:
    """(hosts, ranks on the fullest) of hydra's ``-ppn K`` (``-perhost K``) given more
    ``ranks`` than its hosts (its host list's, else the job's ``nodes``) hold at K each: it
    deals blocks of K round them again, as ``-rr`` deals single ranks (:func:`round_robin`).
    ``mpiexec -ppn 1 -n 4`` in a 2-node salloc runs ranks 0, 2 on one node and 1, 3 on the
    other (measured, MPICH 5.0.2's hydra, s44 tester O6); it had been read as 4 nodes x 1.
    None where the deal does not wrap, the hosts are not known, or the option is Open MPI's
    (``-npernode``, ``ppr:K:node``: it refuses more ranks than that, "not enough slots")."""
    opt = launch.options.get("ntasks-per-node")
    if launch.kind != "mpi" or opt is None or per_node < 1:
        return None
    spelled = script.text[opt.span[0]:opt.span[1]].lstrip("-").split("=")[0].split()[0]
    if spelled not in ("ppn", "perhost"):
        return None
    hosts = _dealt_hosts(launch, nodes)
    if not hosts or ranks <= hosts * per_node:
        return None
    return _deal(script, launch, ranks, hosts, per_node, f"-{spelled} {per_node} -n {ranks}")


def per_socket_note(script: "JobScript", launch: "Launch") -> None:
    """Note that ``launch``'s ``--npersocket K`` (Open MPI) runs K ranks on each socket: its
    ranks per node are K x the node's sockets, which a script does not tell, so they are not
    counted from it (not guessed)."""
    opt = launch.options.get("npersocket") if launch.kind == "mpi" else None
    if opt is not None:
        script.note(f"line {launch.line}: {launch.launcher} "
                    f"{script.text[opt.span[0]:opt.span[1]]} runs {opt.value or 'K'} rank(s) on "
                    "each socket of each node, and the nodes' sockets are not known here, so "
                    "its ranks per node are not counted from it; give -npernode (or --map-by "
                    "ppr:K:node) for a count that is read")


def host_file_note(script: "JobScript", launch: "Launch", per_node: int | None) -> None:
    """Note that ``launch``'s host file, not the script, decides its ranks per node where it
    names none of its own (``per_node``: :func:`ranks_per_host`). Measured (s44, a 2-node
    salloc of 2 tasks per node, a file of the lines ``n1`` and ``n2``, ``-n 2``): Open MPI
    4.1.4 gives a host its ``slots=N``, else the job's slots on it (2 on n1); MPICH's hydra
    gives a line its ``:N``, else one slot (1 + 1); Intel MPI's ``mpiexec -f`` the job's
    slots (2 on n1), its ``-machinefile`` one a line (1 + 1). The file is read when the job
    runs, so the count is said not read (not guessed)."""
    opt = launch.options.get("hostfile") if launch.kind == "mpi" else None
    if opt is None or per_node:
        return
    script.note(f"line {launch.line}: {launch.launcher} {script.written(opt)}: the host file "
                "decides how many ranks run on each node (its hosts and slots, which Open MPI, "
                "hydra and Intel MPI read otherwise: a line without slots is the job's slots "
                "on that node to Open MPI, one slot to hydra), and it is read when the job "
                "runs, so the ranks per node are not read from it: read as the directives ask; "
                "give -npernode K (Open MPI) or -ppn K (hydra) for a count that is read")


def host_list_ranks(launch: "Launch", per_node: int | None = None) -> int | None:
    """The ranks ``launch`` starts without ``-n``: one on each slot of the host list it
    writes out (``--host n1,n1``: 2, ``-hosts n1:2,n2:2``: 4, under ``--map-by node`` too),
    or ``per_node`` (:func:`ranks_per_host`) on each of its hosts; None without one, with a
    host file, or where it spreads its ranks otherwise (``-rr``, ``--bynode``: not measured)."""
    hosts = launch.options.get("host")
    if hosts is None or "ntasks" in launch.options or launch.kind != "mpi" or \
            "hostfile" in launch.options:
        return None
    items = _host_slots(hosts.value or "")
    if not items:
        return None
    if per_host := ranks_per_host(launch, per_node):
        return per_host * len(_joined(items, anywhere=True))
    return sum(n for _, n in items) if _fills_slots(launch) or _by_node(launch) else None


def _by_node(launch: "Launch") -> bool:
    """Whether ``launch`` spreads its ranks by ``--map-by node`` (with or without modifiers)
    and no other spreading option."""
    mapping = launch.options.get("map-by")
    return mapping is not None and (mapping.value or "").split(":")[0].lower() == "node" \
        and not any(o in launch.options for o in _SPREADING)


def every_slot(script: "JobScript", launch: "Launch", ranks: int) -> tuple[int, int] | None:
    """(hosts, ranks on the fullest) of ``launch`` under ``--map-by node`` running ``ranks``,
    as many as its host list's slots: every slot runs one, a host named again adding its
    slots to the first mention (Open MPI 4.1.4: ``n1,n2,n1`` runs 2 on n1); None otherwise."""
    hosts = launch.options.get("host")
    items = _host_slots(hosts.value or "") if hosts is not None and _by_node(launch) else None
    if not items or ranks != sum(n for _, n in items):
        return None
    counts = [n for _, n in _joined(items, anywhere=True)]
    _uneven(script, launch, hosts.value or "", counts)
    return len(counts), max(counts)


def slot_fill(script: "JobScript", launch: "Launch", ranks: int, nodes: int | None,
              tasks: int | None, per_node: int | None) -> tuple[int, int] | None:
    """(nodes, ranks on the fullest node) where ``launch`` (``mpirun`` / ``mpiexec``, ``ranks``
    from its ``-n``, no ranks per node of its own) fills slots node after node: the host
    list's, else the job's (``nodes``, ``tasks`` and ``per_node`` as its directives ask);
    None where it spreads its ranks itself, or they overflow the job's slots. Notes the
    layout where it leaves nodes of the job idle."""
    if ranks <= 0 or not _fills_slots(launch):
        return None
    hosts = launch.options.get("host")
    if hosts is not None:
        return _host_list_fill(script, launch, hosts.value or "", ranks)
    slots = _job_slots(nodes, tasks, per_node)
    if not slots or ranks > sum(slots):
        return None
    used = [c for c in _filled([(str(k), s) for k, s in enumerate(slots)], ranks) if c]
    if len(used) < len(slots):
        script.note(f"line {launch.line}: {launch.launcher} -n {ranks} fills each node's "
                    f"{slots[0]} slot{'s' if slots[0] != 1 else ''} (its tasks per node) before "
                    f"the next: its ranks run on {len(used)} of the job's {len(slots)} nodes, "
                    f"which is read; to spread them give --map-by ppr:"
                    f"{-(-ranks // len(slots))}:node (Open MPI) or -ppn "
                    f"{-(-ranks // len(slots))} (hydra)")
    return len(used), max(used)


def _host_list_fill(script: "JobScript", launch: "Launch", value: str,
                    ranks: int) -> tuple[int, int] | None:
    """(nodes, ranks on the fullest) of ``ranks`` filling host list ``value`` as Open MPI and
    hydra both fill it; None (with a note where they differ) otherwise."""
    items = _host_slots(value)
    if not items:
        return None
    if ranks > sum(n for _, n in items):
        return _overfilled(script, launch, value, items, ranks)
    open_mpi, hydra = (_filled(_joined(items, anywhere), ranks) for anywhere in (True, False))
    readings = {(len([c for c in f if c]), max(f)) for f in (open_mpi, hydra)}
    if len(readings) > 1:
        hosts = _joined(items, anywhere=True)
        script.note(f"line {launch.line}: {launch.launcher}'s host list {value[:80]} names a host "
                    "twice apart, which Open MPI and hydra fill otherwise: its layout is not "
                    "read from it; write each host once with its slots ("
                    + ",".join(f"{n}:{c}" for n, c in hosts) + ")")
        return None
    _uneven(script, launch, value, [c for c in open_mpi if c])
    return readings.pop()


def _uneven(script: "JobScript", launch: "Launch", value: str, counts: list[int]) -> None:
    """Note a host list whose hosts run different numbers of ranks (``n1,n2,n3:2``: 1, 1, 2):
    a model knows even layouts only, so any reading of it is approximate (s42 review R5: read
    as 2 nodes x 2 with no word)."""
    if len(set(counts)) > 1:
        script.note(f"line {launch.line}: {launch.launcher}'s host list {value[:80]} runs "
                    f"{', '.join(map(str, counts))} ranks on its {len(counts)} hosts, an uneven "
                    "layout, which a model of even layouts (nodes x ranks per node) reads only "
                    "approximately; give each host the same slots for an answer about what runs")


def _dealt_again(items: list[tuple[str, int]], ranks: int) -> list[int]:
    """Hydra's ranks by host when ``ranks`` outnumber the list's slots: dealt round the list
    (each mention its slots) until none is left."""
    per_host: dict[str, int] = {}
    left = ranks
    while left > 0:
        for name, slot in items:
            placed = min(slot, left)
            per_host[name] = per_host.get(name, 0) + placed
            left -= placed
    return list(per_host.values())


def _spread_over(items: list[tuple[str, int]], ranks: int) -> list[int]:
    """Open MPI's ranks by host (``--oversubscribe``) when ``ranks`` outnumber the slots:
    each host's slots filled, what is over shared evenly, the first hosts one more."""
    hosts = _joined(items, anywhere=True)
    over = ranks - sum(n for _, n in hosts)
    share, extra = divmod(over, len(hosts))
    return [n + share + (1 if k < extra else 0) for k, (_, n) in enumerate(hosts)]


def _overfilled(script: "JobScript", launch: "Launch", value: str,
                items: list[tuple[str, int]], ranks: int) -> tuple[int, int] | None:
    """(nodes, ranks on the fullest) of more ``ranks`` than host list ``value`` has slots, as
    the MPI that runs them places them: Open MPI only when told ``--oversubscribe`` (which
    hydra refuses as an unknown option), hydra otherwise; the launch's name narrows it to one.
    Warns where Open MPI refuses them (read as it runs them once told); where the name does
    not tell the MPI, notes what each needs (hydra no option, Open MPI ``--oversubscribe``);
    None where the two place them otherwise."""
    from hpcds1mpi.launch.mpi_installation import LAUNCHER_FILE_NAMES
    from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

    family = LAUNCHER_FILE_NAMES.get(launch.launcher.rsplit("/", 1)[-1])
    mapping = (launch.options["map-by"].value or "") if "map-by" in launch.options else ""
    flag = "oversubscribe" in launch.options
    runs = {OPENMPI: family != MPICH and (flag or "OVERSUBSCRIBE" in mapping.upper()),
            MPICH: family != OPENMPI and not flag}
    slots = sum(n for _, n in items)
    over = (f"line {launch.line}: {launch.launcher} -n {ranks} over host list {value[:80]}'s "
            f"{slots} slot{'s' if slots != 1 else ''}")
    if family == OPENMPI and not runs[OPENMPI]:  # read as it runs once told so
        script.warn(f"{over}: Open MPI refuses it (not enough slots); give --oversubscribe, "
                    "or the hosts more slots")
        runs[OPENMPI] = True
    elif family is None and not runs[OPENMPI]:
        # which MPI's launcher it is is not told by its name: what each needs, so that a
        # hydra user is not told to add --oversubscribe, which hydra refuses (s42 tester F10)
        script.note(f"{over}: read as hydra (MPICH, Intel MPI) runs it, dealing the ranks "
                    "round the list again, with no option; where it is Open MPI's, it refuses "
                    "it (not enough slots) unless given --oversubscribe (an option hydra "
                    "refuses), or give the hosts more slots")
    layouts = {MPICH: _dealt_again(items, ranks), OPENMPI: _spread_over(items, ranks)}
    readings = {(len(f), max(f)) for k, f in layouts.items() if runs[k]}
    if len(readings) > 1:
        script.note(f"{over} is placed otherwise by Open MPI and hydra: its layout is not "
                    "read from it; give each host the slots of its ranks")
        return None
    _uneven(script, launch, value, next(f for k, f in layouts.items() if runs[k]))
    return readings.pop() if readings else None

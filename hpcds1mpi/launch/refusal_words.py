"""How a refusal of a launcher that cannot start a program as one job
(:func:`~hpcds1mpi.launch.mpi_family.check_launcher`) words its fix, by the options of the
command refusing: a ``--command`` sweep or ``tune --program`` takes ``--mpiexec``; the kernels'
sweep (``sweep --launch``, tune's kernel trials) does not, and names the cluster file's key.

One check, two wordings (s43 review R5: the kernels' refusal had been a second copy of the
check, :mod:`hpcds1mpi.launch.kernel_launcher_check`).
"""

from __future__ import annotations

from dataclasses import dataclass

from hpcds1mpi.errors import ConfigError, LaunchError


@dataclass(frozen=True)
class RefusalWords:
    """The words of a refusal. ``{name}``: the MPI family's name, ``{evidence}``: how the
    program's MPI was read, ``{0}``: a plugin or a launcher's path.

    Attributes:
        head: what the program is linked against.
        plugin_from: where srun's ``--mpi`` came from, said after it ("" for nothing).
        plugin_fix: the fix naming the plugin that works.
        launcher_fix: the fix naming a launcher of the program's family.
        no_launcher: the fix where no launcher of its family is found.
        or_launcher: its launcher offered beside the plugin ("": offered with none).
        error: the error an mpiexec of another family raises.
    """

    head: str = "this program is linked against {name} ({evidence})"
    plugin_from: str = ""
    # s43 review R3: sweep and tune both take --mpi, and a cluster file's mpi sets it too
    plugin_fix: str = ('use srun --mpi={0} (sweep and tune: --mpi {0}, or mpi = "{0}" in a '
                       '--cluster file)')
    launcher_fix: str = "use its launcher: --mpiexec {0}"
    no_launcher: str = "install {name}'s launcher and pass it with --mpiexec PATH"
    or_launcher: str = ", or its launcher: --mpiexec {0}"
    error: type = LaunchError


def kernel_words(command: str, plugin_from: str, mpiexec_from: str) -> RefusalWords:
    """The words of a refusal of the kernels' launcher by ``command`` (``"sweep --launch"``,
    ``"tune"``), whose srun plugin came from ``plugin_from`` and whose mpiexec is set by the
    key ``mpiexec_from`` (neither takes ``--mpiexec``, s42)."""
    done = "; nothing was launched"
    return RefusalWords(
        head=f"{command}: the kernels run this Python's mpi4py, linked against {{name}} "
             "({evidence})",
        plugin_from=plugin_from,
        plugin_fix='pass --mpi {0} (or set mpi = "{0}" in the --cluster file)' + done,
        launcher_fix=f"set {mpiexec_from} to {{0}}" + done,
        no_launcher=f"install {{name}}'s launcher and set {mpiexec_from} to it" + done,
        or_launcher="", error=ConfigError)

"""The program a container runner starts: ``singularity exec IMG ./app``, ``apptainer run IMG``,
``docker run --rm -v a:b IMG ./app``, ``podman run IMG``.

A program's default workload label is its file name (:mod:`~hpcds1mpi.launch.program_label`);
read as the command's first word, every containerised program had been labelled
``singularity`` (or ``docker``...), so two of them became one workload (s41 review F8). The
runner's options are read as its parser reads them; one not known here makes the command
unreadable (None): no guess.
"""

from __future__ import annotations

import os

#: Per runner: its subcommands that start a program, its options taking a value, its flags.
_RUNNERS: dict[str, tuple[frozenset, frozenset, frozenset]] = {
    "singularity": (
        frozenset({"exec", "run"}),
        frozenset({"-B", "--bind", "--env", "--env-file", "-H", "--home", "--pwd", "-W",
                   "--workdir", "-o", "--overlay", "-S", "--scratch", "--security",
                   "--network", "--network-args", "--app", "--mount", "--hostname", "--dns",
                   "--no-mount", "--cpus", "--memory", "--apply-cgroups", "--drop-caps",
                   "--add-caps"}),
        frozenset({"--nv", "--rocm", "--nvccli", "-e", "--cleanenv", "-c", "--contain", "-C",
                   "--containall", "--fakeroot", "-f", "--writable", "-w", "--writable-tmpfs",
                   "-i", "--ipc", "-p", "--pid", "-u", "--userns", "--no-home", "--compat",
                   "--no-privs", "--no-init", "--no-eval", "--no-umask", "--unsquash"})),
    "docker": (
        frozenset({"run"}),
        frozenset({"-v", "--volume", "-e", "--env", "--env-file", "-w", "--workdir", "--name",
                   "-u", "--user", "--network", "--net", "--mount", "--gpus", "--cpus", "-m",
                   "--memory", "--entrypoint", "--ipc", "--shm-size", "--platform", "--pull",
                   "-h", "--hostname", "--cap-add", "--cap-drop", "--security-opt", "--ulimit",
                   "--device", "-p", "--publish", "-l", "--label", "--cidfile", "--runtime",
                   "--userns", "--pid", "--uts", "--tmpfs", "--add-host", "--dns",
                   "--cpuset-cpus", "--cpuset-mems", "--cpu-shares", "-c", "--group-add",
                   "--volumes-from", "--log-driver", "--log-opt", "--restart"}),
        frozenset({"--rm", "-i", "--interactive", "-t", "--tty", "-d", "--detach",
                   "--privileged", "--init", "--read-only", "-P", "--publish-all"})),
}
_RUNNERS["apptainer"] = _RUNNERS["singularity"]
_RUNNERS["podman"] = _RUNNERS["docker"]


def is_container_runner(word: str) -> bool:
    """Whether ``word`` (a command's program word, with or without a folder) is a container
    runner read here."""
    return os.path.basename(word) in _RUNNERS


def container_program(words: list[str]) -> tuple[int, int | None] | None:
    """(index of the image, index of the command run in it or None where the image's own
    runs) of a command whose ``words[0]`` is a container runner; None where its subcommand or
    an option is not read here, or no image follows."""
    subcommands, valued, flags = _RUNNERS[os.path.basename(words[0])]
    if len(words) < 2 or words[1] not in subcommands:
        return None
    k = 2
    while k < len(words) and words[k].startswith("-") and words[k] != "-":
        option, k = words[k], k + 1
        if option == "--":
            break
        key, equals, _ = option.partition("=")
        if key in valued and not equals:
            k += 1
        elif not (key in valued or option in flags or _bunched(option, flags)):
            return None
    if k >= len(words):
        return None
    return k, (k + 1 if k + 1 < len(words) else None)


def _bunched(option: str, flags: frozenset) -> bool:
    """Whether ``option`` is short flags written as one (``-it``)."""
    return option[1:2] != "-" and len(option) > 2 and all(f"-{c}" in flags for c in option[1:])


def image_name(word: str) -> str:
    """An image's name: ``img.sif`` for ``/x/img.sif``, ``app`` for
    ``ghcr.io/org/app:1.2`` or ``docker://org/app@sha256:...``."""
    name = os.path.basename(word.rstrip("/"))
    if os.path.isfile(word) or name.endswith((".sif", ".simg", ".img")):
        return name
    return name.split("@")[0].split(":")[0] or name

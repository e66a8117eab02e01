"""How much memory this process can still take: the machine's available memory, or less where
a cgroup (a Slurm job's, a container's) limits it. Readers check a file's declared or growing
size against it, so that a small file that unpacks to gigabytes is refused in one line instead
of taking the node down."""

from __future__ import annotations

from pathlib import Path


def available_bytes() -> int | None:
    """Memory this process can still take: the machine's available memory, or less where a
    cgroup (a Slurm job's, a container's) limits it; None when it cannot be told."""
    try:
        import psutil

        have = int(psutil.virtual_memory().available)
    except Exception:  # psutil missing or unsupported here: do not refuse on a guess
        return None
    for limit_file, usage_file in _cgroup_memory_files():
        try:
            limit = limit_file.read_text().strip()
            if limit != "max":  # cgroup v1 says "no limit" with a huge number instead
                used = int(usage_file.read_text().strip()) - _reclaimable(usage_file.parent)
                have = min(have, max(int(limit) - used, 0))
        except (OSError, ValueError):  # not readable here: the other figures stand
            continue
    return have


def _reclaimable(folder: Path) -> int:
    """Bytes of inactive file cache a cgroup counts as used but gives back on demand (the
    usage figure includes the page cache; kubelet's "working set" subtracts the same)."""
    try:
        stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
        # v1 "total_" counts the cgroup's children too; v2 has only the plain key
        return int(stat.get("total_inactive_file", stat.get("inactive_file", 0)))
    except (OSError, ValueError):
        return 0


def _cgroup_memory_files() -> list[tuple[Path, Path]]:
    """(limit, usage) files of this process's memory cgroup, v2 and v1, under the cgroup
    path /proc/self/cgroup names and at the mount's root (inside a container the mount root
    is the container's own cgroup and the named path does not exist)."""
    root = Path("/sys/fs/cgroup")
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        _, controllers, cgroup_path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # v2 unified hierarchy
            base, names = root, ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            base, names = root / "memory", ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        for folder in {base / cgroup_path.lstrip("/"), base}:
            if (folder / names[0]).exists():
                found.append((folder / names[0], folder / names[1]))
    return found

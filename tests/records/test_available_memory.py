"""Available memory: the machine's, or a cgroup's limit less what it holds (s27 tester P,
defects 5 and 8: readers refuse what would not fit instead of taking the node down)."""

from __future__ import annotations


def test_available_memory_takes_a_cgroup_limit_less_its_page_cache(tmp_path, monkeypatch):
    from hpcds1mpi.records import available_memory

    (tmp_path / "memory.max").write_text("1000000\n")
    (tmp_path / "memory.current").write_text("600000\n")
    (tmp_path / "memory.stat").write_text("anon 400000\ninactive_file 100000\n")
    monkeypatch.setattr(available_memory, "_cgroup_memory_files",
                        lambda: [(tmp_path / "memory.max", tmp_path / "memory.current")])
    assert available_memory.available_bytes() == 1000000 - (600000 - 100000)
    (tmp_path / "memory.max").write_text("max\n")
    assert available_memory.available_bytes() > 1000000


def test_available_memory_is_a_positive_number_here():
    from hpcds1mpi.records import available_memory

    have = available_memory.available_bytes()
    assert have is None or have > 0

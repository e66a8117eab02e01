"""Which of a program's arguments are paths read from the folder it starts in (s37 tester G3:
a script run from another folder than the sweep's lost ``nw/h2o-3.nw``)."""

from __future__ import annotations

from hpcds1mpi.launch.program_folder import in_folder, relative_paths


def test_relative_paths_are_the_arguments_read_from_the_programs_folder(tmp_path):
    (tmp_path / "h2o.nw").write_text("x\n")
    tokens = ["nwchem", "nw/h2o-3.nw", "-s", "../../md.tpr", "--in=cases/a.inp", "h2o.nw",
              "/abs/input", "-n", "4", "--url=http://host/x", "-deffnm", "md"]
    assert relative_paths(tokens) == ["nw/h2o-3.nw", "../../md.tpr", "cases/a.inp"]
    # where the folder can be read: a bare file name in it is one too, the program is not
    assert relative_paths(tokens, str(tmp_path)) == ["nw/h2o-3.nw", "../../md.tpr",
                                                     "cases/a.inp", "h2o.nw"]
    assert relative_paths(["./app", "8"]) == ["./app"]
    assert relative_paths(["gmx_mpi", "mdrun"], str(tmp_path)) == []


def test_in_folder_takes_a_relative_path_from_the_folder():
    assert in_folder("../app", "/w/r") == "/w/r/../app"
    assert in_folder("app", "/w/r") == "app" and in_folder("/bin/app", "/w") == "/bin/app"

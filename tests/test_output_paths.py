"""Where an output is written (a symlink's target) and the refusal of an output that is one of
the command's inputs (s33 tester C1, C2, C3)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.atomic import check_output_dir
from hpcds1mpi.errors import OutputError
from hpcds1mpi.output_paths import refuse_inputs, written_path


def test_a_link_is_written_at_its_target_and_anything_else_where_it_is(tmp_path):
    (tmp_path / "store").mkdir()
    real = tmp_path / "store" / "real.h5"
    real.write_text("runs")
    link, chain, dangling = tmp_path / "link.h5", tmp_path / "chain.h5", tmp_path / "new.h5"
    link.symlink_to("store/real.h5")
    chain.symlink_to("link.h5")
    dangling.symlink_to("store/not-yet.h5")  # open() would create the target
    assert written_path(link) == real.resolve() == written_path(chain)
    assert written_path(dangling) == (tmp_path / "store" / "not-yet.h5").resolve()
    assert written_path(tmp_path / "plain.h5") == tmp_path / "plain.h5"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    into = tmp_path / "into"
    into.symlink_to(loop)
    with pytest.raises(OutputError, match="loop of symbolic links; choose another path for "
                                          "the export"):
        written_path(into, "export")


def test_an_output_that_is_an_input_is_refused_however_it_is_named(tmp_path):
    """A symlink, a hard link or the same name: one line naming the input and the link."""
    data = tmp_path / "e.h5"
    data.write_text("telemetry")
    (tmp_path / "x.csv").symlink_to("e.h5")
    (tmp_path / "hard.csv").hardlink_to(data)
    for out in ("x.csv", "hard.csv", "e.h5"):
        with pytest.raises(OutputError) as err:
            refuse_inputs(tmp_path / out, files=[("telemetry file", data)], what="export")
        line = str(err.value)
        assert "\n" not in line and f"is the telemetry file {data}" in line
        assert line.endswith("choose another --out")
    assert "(a link to" in _refusal(tmp_path / "x.csv", data)
    refuse_inputs(tmp_path / "other.csv", files=[("telemetry file", data), ("table", None)])
    refuse_inputs(tmp_path / "e.h5", files=[("telemetry file", tmp_path / "missing.h5")])
    assert data.read_text() == "telemetry"


def _refusal(out, data) -> str:
    with pytest.raises(OutputError) as err:
        refuse_inputs(out, files=[("telemetry file", data)])
    return str(err.value)


def test_an_output_inside_an_input_folder_is_refused_a_neighbour_is_not(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "members.pkl").write_text("bundle")
    (tmp_path / "into").symlink_to("model/new.sh")
    folders = [("--model bundle", model)]
    for out in (model / "members.pkl", model / "new.sh", tmp_path / "into"):
        with pytest.raises(OutputError, match="is inside the --model bundle .*choose a path "
                                              "outside it"):
            refuse_inputs(out, folders=folders, option="-o", what="batch script")
    refuse_inputs(tmp_path / "model.sh", folders=folders, option="-o")  # a name that starts so
    refuse_inputs(tmp_path / "job.sh", folders=[("--model bundle", None)], option="-o")


def test_an_output_inside_the_model_bundle_is_refused_the_bundle_itself_is_not(tmp_path):
    """tune --out MODEL/t.h5, advise --rewrite MODEL/rw.sh, mobo --out MODEL/front and learn
    --out MODEL/sub were written into the bundle, which learn then refused (s47 tester M11);
    the bundle itself is left to the command (learn retrains it in place)."""
    from hpcds1mpi.output_paths import refuse_inside_model

    model = tmp_path / "bm"
    (model / "sub").mkdir(parents=True)
    (tmp_path / "via").symlink_to(model)
    for out in (model / "t.h5", model / "sub" / "front", tmp_path / "via" / "t.h5"):
        with pytest.raises(OutputError, match="is inside the --model bundle .*bm: writing the "
                                              "telemetry there") as err:
            refuse_inside_model(out, model, what="telemetry")
        assert "\n" not in str(err.value) and err.value.exit_code == 2
    with pytest.raises(OutputError, match="^--rewrite "):
        refuse_inside_model(model / "rw.sh", model, "--rewrite")
    for out, given in ((model, model), (tmp_path / "via", model), (tmp_path / "t.h5", model),
                       (tmp_path / "bm2" / "t.h5", model), (model / "t.h5", None),
                       (None, model)):
        refuse_inside_model(out, given)


def test_an_output_folder_no_rename_can_replace_is_refused_before_any_work(tmp_path,
                                                                            monkeypatch):
    """Was: train --out . trained for minutes, then failed "Device or resource busy" (exit 1,
    the same on every rerun): a folder cannot be renamed onto "." or a mount point (s47
    tester M7)."""
    (tmp_path / "e" / "m").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "e")
    for given, name in ((".", "../e"), ("./", "../e"), ("..", f"../../{tmp_path.name}")):
        with pytest.raises(OutputError, match=rf"--out {given} names the folder by .*; give "
                                              rf"the folder's own name \({name}\)"):
            check_output_dir(given, ours=lambda p: True, force=True)
    mount = tmp_path / "e" / "m"
    monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) == os.fspath(mount))
    with pytest.raises(OutputError, match=r"is a mount point, .*a folder inside it \(.*/m/bundle"):
        check_output_dir(mount, ours=lambda p: True, force=True)
    check_output_dir("m", ours=lambda p: True, force=True)  # by its name: still written


def test_an_output_inside_any_bundle_is_refused_another_tools_manifest_is_not(tmp_path):
    """ingest, telemetry export and sweep take no --model: an --out inside a bundle folder (one
    whose manifest.json is a bundle's) had been written into it (s47 left); refused as M11's."""
    import shutil

    from hpcds1mpi.output_paths import bundle_around, refuse_inside_bundle
    from tests.helpers import REPO

    model = tmp_path / "bm"
    (model / "sub").mkdir(parents=True)
    shutil.copy(REPO / "hpcds1mpi" / "data" / "default_model" / "manifest.json", model)
    (tmp_path / "via").symlink_to(model)
    for out in (model / "jobs.parquet", model / "sub" / "new" / "t.h5",
                tmp_path / "via" / "e.csv"):
        assert bundle_around(out) == model.resolve()
        with pytest.raises(OutputError, match=r"^--out .* is inside the model bundle .*bm: "
                                              "writing the export there would change it; "
                                              "choose a path outside it$") as err:
            refuse_inside_bundle(out, what="export")
        assert "\n" not in str(err.value) and err.value.exit_code == 2
    other = tmp_path / "app"  # another tool's manifest.json, and one that is no JSON
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "app", "version": 1}')
    (tmp_path / "bm2").mkdir()
    (tmp_path / "bm2" / "manifest.json").write_text("not json")
    for out in (tmp_path / "t.h5", other / "t.h5", tmp_path / "bm2" / "t.h5", None):
        refuse_inside_bundle(out)
    assert bundle_around(tmp_path / "bm.csv") is None


def test_a_manifest_nested_too_deep_for_json_is_no_bundle(tmp_path):
    """s48 read-back: bundle_around read a parent's manifest.json without catching
    RecursionError (mobo's copy of the test did), so a deeply nested one ended in a traceback."""
    from hpcds1mpi.output_paths import bundle_around, has_bundle_manifest

    (tmp_path / "manifest.json").write_bytes(b"[" * 200_000)
    assert not has_bundle_manifest(tmp_path)
    assert bundle_around(tmp_path / "out.h5") is None

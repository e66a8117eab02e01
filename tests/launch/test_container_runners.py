"""``launch/container_runners``: the program a container runner starts (s41 review F8)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.container_runners import container_program, image_name, \
    is_container_runner


@pytest.mark.parametrize("command, found", [
    ("singularity exec img.sif ./app 3", (2, 3)), ("apptainer run img.sif", (2, None)),
    ("singularity exec --bind=/a:/b -B /c --nv img.sif ./app", (6, 7)),
    ("docker run --rm -it -v a:b -e X=1 org/app:1 ./a", (8, 9)),
    ("podman run -- img", (3, None)),
    # a subcommand or option not read here, or no image: no guess
    ("singularity shell img.sif", None), ("docker run --unknown img", None),
    ("docker run -v a:b", None)])
def test_the_image_and_its_command_are_read_past_the_runners_options(command, found):
    words = command.split()
    assert is_container_runner(words[0]) and container_program(words) == found


def test_an_images_name():
    assert image_name("/x/img.sif") == "img.sif"
    assert image_name("ghcr.io/org/app:1.2") == "app"
    assert image_name("docker://org/app@sha256:ab") == "app"
    assert not is_container_runner("./app")

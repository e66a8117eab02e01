"""The workload label of a user's program, one rule for ``sweep --command`` and ``tune
--program``: ``--label`` checked, or the program's file name — past an exec-wrapper prefix
(``env X=1``, ``nice``), a container runner (``singularity exec IMG ./app`` is ``app``) and an
interpreter with its options (``python3 -W ignore app.py`` is ``app.py``) — made a label.

``sweep`` had named every program without ``--label`` ``external``, silently, so two programs
swept into two files became one workload when trained together, and recommend answered one
with the other's script (s41 tester A1); only ``tune`` had built the label from the file name.
"""

from __future__ import annotations

import os
import re
import unicodedata

#: The label a program gets where its command names no file (``bash -c '...'`` gives the
#: interpreter's name instead; an empty word this).
FALLBACK = "external"


def program_word(tokens: list[str]) -> str:
    """The word of ``tokens`` that names the program: past an exec-wrapper prefix, a container
    runner (:mod:`~hpcds1mpi.launch.container_runners`: the command run in the image, else the
    image's name) and an interpreter (its script); the interpreter itself where it runs code
    given inline (``bash -c``, ``python -c``, ``perl -e``)."""
    from hpcds1mpi.launch.container_runners import container_program, image_name, \
        is_container_runner
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.script_placeholders import program_at

    if not tokens:
        return ""
    start = program_index(tokens)
    if is_container_runner(tokens[start]) and (inside := container_program(tokens[start:])):
        image, command = inside
        if command is None:
            return image_name(tokens[start + image])
        return program_word(tokens[start + command:])
    at = program_at(tokens)
    if at > 0 and tokens[at - 1] in ("-c", "-e", "-E"):
        return tokens[program_index(tokens)]
    return tokens[at]


def workload_label(program_file: str, label: str | None, say) -> str:
    """The workload label of a program whose file is ``program_file``: ``--label`` checked, or
    one built from the file's name, ``say`` -ing it in one line where the name's characters a
    label cannot hold — a space, ``*``, a quote — were made ``_`` (``my app`` runs as
    ``my_app``). A name
    that is a label is kept as it is (recommend's default job name spells a label's letters a
    job name cannot hold: ``decide/job_names.py``). Built before any launch (s39 tester D10).

    Raises:
        ConfigError: a bad ``--label``, or a file name that is a kernel's (its runs would be
            taken for the kernel's), naming ``--label``.
    """
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.kernels import declaring
    from hpcds1mpi.schemas.runs import WORKLOAD_LABEL, WORKLOAD_LABEL_WORDS

    if label is not None:
        if not re.fullmatch(WORKLOAD_LABEL, label):
            raise ConfigError(f"--label {label!r}: {WORKLOAD_LABEL_WORDS}")
        return label  # a kernel's name: refused with the plan's own words
    name = os.path.basename(program_file.rstrip("/"))
    # a name that is a label stays it (café, _run.sh: the review of s39 — rebuilt, one
    # program's runs had split over two labels); only the characters a label cannot hold
    # become "_"
    built = name if re.fullmatch(WORKLOAD_LABEL, name) else \
        re.sub(r"[^\w.+-]+", "_", unicodedata.normalize("NFC", name))
    if not built.strip("_"):
        built = FALLBACK
    if kernel := declaring(built):  # or a kernel's option deck (s41 tester D8)
        what = "the name of a kernel" if kernel == built else f"the label of kernel {kernel} " \
            "run with options"
        raise ConfigError(f"the program's file name {name!r} is {what}, whose runs its runs "
                          "would be taken for: give --label NAME")
    if built != name:
        say(f"workload label {built!r}, from the program's file name {name!r} (a label "
            f"may hold letters, digits, '.', '_', '+' and '-' only): give --label NAME for "
            "another")
    return built


def program_label(tokens: list[str], label: str | None, say) -> str:
    """:func:`workload_label` of the program a command's ``tokens`` run
    (:func:`program_word`); where that is a container runner whose words are not read here
    (``singularity shell``, an option not known), said to be the command's first word."""
    from hpcds1mpi.launch.container_runners import is_container_runner

    word = program_word(tokens)
    if label is None and is_container_runner(word):
        say(f"workload label {os.path.basename(word)!r}, the command's first word: the program "
            "its container runs is not read from these words; give --label NAME for the "
            "program's own")
    return workload_label(word, label, say)

"""A kernel's options (a plan's ``[[kernel]] extra``: stencil ``sweeps``, cg ``iterations``) as
its runs record them, and the workload label that keeps runs of other options apart.

Options change what a run measures (100 Jacobi sweeps are not 10), as another input deck
changes a program's runs, yet the runs table's ``workload`` is the kernel's name. The sweep
writes them in the ``extra`` column (JSON, sorted keys; "" for none, and in a file written
before the column), and training reads a kernel run with options as the workload
``<kernel>+<key>.<value>`` (``stencil+sweeps.100``): a model never pools two decks as one
workload, and its answers name the options measured (s40 tester B13).
"""

from __future__ import annotations

import hashlib
import json
import re

from hpcds1mpi.kernels import OPTIONS_SEPARATOR as SEPARATOR  # a character labels may hold


def options_text(pairs, kernel: str | None = None) -> str:
    """The ``extra`` column's value for a run's ``(key, value)`` option pairs: JSON with
    sorted keys, "" for none; each value of the type ``kernel`` declares for it
    (:func:`declared`), so one option is written one way."""
    options = dict(pairs) if pairs else {}
    options = declared(kernel, options) if kernel else options
    return json.dumps(options, sort_keys=True) if options else ""


def declared(kernel: str, options: dict) -> dict:
    """``options`` with each value of the type kernel ``kernel`` declares for it
    (:attr:`~hpcds1mpi.kernels.Kernel.options`): a float option a plan gives as a whole number
    (``allreduce_iteration_scale = 2``) as ``2.0``, as ``hpcds1mpi run --option`` reads it;
    the label had said ``.2`` where every reader said ``.2.0`` (s41 review F3). Any other value,
    an option it does not declare, and a name that is no kernel: as given."""
    from hpcds1mpi import kernels

    try:
        kinds = (kernels.get(kernel).options or {}) if kernels.is_kernel(kernel) else {}
    except Exception:  # noqa: BLE001 - a plugin that cannot load: its options as written
        kinds = {}
    return {key: float(value) if type(value) is int and kinds.get(key, (None,))[0] is float
            else value for key, value in options.items()}


def options_label(workload: str, text: str) -> str:
    """The workload label of a kernel run with options ``text`` (the ``extra`` column):
    ``stencil+sweeps.100``; ``workload`` itself without options. Each value is of the type
    the kernel declares (:func:`declared`: a file written before reads as one written now). A
    value with characters a label cannot hold (a path, a list) gets them as ``_`` and a short
    hash of the options, so two decks never share a label."""
    try:
        options = json.loads(text) if text else {}
    except ValueError:  # a column changed by hand: still its own workload
        options = {"extra": text}
    if not isinstance(options, dict) or not options:
        return workload
    typed = declared(workload, options)
    if any(type(typed[key]) is not type(options[key]) for key in options):
        text = options_text(typed.items())  # the hash of the options as written now
    return _label(workload, typed, text)


def _label(workload: str, options: dict, text: str) -> str:
    """:func:`options_label` of ``options`` as they are (no type applied), ``text`` hashed."""
    parts, lossy = [], False
    for key in sorted(options):
        value = options[key]
        word = value if isinstance(value, str) else json.dumps(value)
        part = f"{key}.{word}"
        clean = re.sub(r"[^\w.-]+", "_", part)
        lossy |= clean != part
        parts.append(clean)
    label = SEPARATOR.join([workload, *parts])
    if lossy:
        label += SEPARATOR + hashlib.sha1(text.encode()).hexdigest()[:6]  # no key.value
    return label


def kernel_of(label: str) -> str | None:
    """The registered kernel a label of :func:`options_label` names (``stencil`` for
    ``stencil+sweeps.100``); None for a plain name or one of no kernel."""
    from hpcds1mpi.kernels import is_kernel

    name, sep, _ = str(label).partition(SEPARATOR)
    return name if sep and name and is_kernel(name) else None


def labelled(frame):
    """``frame`` (runs-table rows) with each kernel run that has options under its
    :func:`options_label`; a file without the column reads as runs without options."""
    if "extra" not in frame.columns:
        return frame
    text = frame["extra"].fillna("").astype(str)
    kernel = frame["kind"].astype(str) == "kernel" if "kind" in frame.columns else True
    with_options = (text != "") & kernel
    if with_options.any():
        frame = frame.copy()
        pairs = list(zip(frame.loc[with_options, "workload"].astype(str), text[with_options]))
        labels = {pair: options_label(*pair) for pair in set(pairs)}  # a kernel looked up once
        frame.loc[with_options, "workload"] = [labels[pair] for pair in pairs]
    return frame


def share_options(a: dict, b: dict) -> None:
    """Give two records of one kernel run (one run id: it hashes the options) the options one
    of them holds where the other holds none: that one was written before the ``extra``
    column, and a merge keeping it had pooled the deck with the plain kernel (s41 tester D4)."""
    if a.get("kind", "kernel") != "kernel" or b.get("kind", "kernel") != "kernel":
        return
    known = a.get("extra") or b.get("extra") or ""
    for row in (a, b):
        if known and not row.get("extra"):
            row["extra"] = known


def decks_note(workload: str, known) -> str:
    """`` (measured only with kernel options: 'stencil+sweeps.100'; ...)`` for a kernel a
    model knows only under option labels, else "": ask for one, or sweep the default deck."""
    decks = [k for k in known if kernel_of(k) == workload]
    if not decks:
        return ""
    shown = ", ".join(repr(d) for d in decks[:3]) + (" ..." if len(decks) > 3 else "")
    return (f" (measured only with kernel options, as workload {shown}: ask for that "
            f"workload, or sweep {workload} without extra)")


def typed_options(kernel, words: dict) -> dict:
    """Options given as words (``hpcds1mpi run --option sweeps=100``) as the kernel reads
    them: each of the type it declares (:attr:`~hpcds1mpi.kernels.Kernel.options`), an
    undeclared one's JSON value where it is one (``true``, ``2.5``), else the word; checked
    as a plan's are.

    Raises:
        ConfigError: a value not of its declared type, or one the kernel refuses.
    """
    from hpcds1mpi.errors import ConfigError

    options = {}
    for key, word in words.items():
        kind = (kernel.options or {}).get(key, (None,))[0]
        try:
            options[key] = kind(word) if kind in (int, float, str) else json.loads(word)
        except ValueError:
            if kind is not None:
                raise ConfigError(f"--option {key}={word}: {kernel.name}'s {key} is "
                                  f"{'a whole number' if kind is int else 'a number'}; give "
                                  "one") from None
            options[key] = word
    kernel.check_extra(options)
    return options


def run_options(label: str) -> list[str] | None:
    """``hpcds1mpi run``'s ``--option KEY=VALUE`` arguments for workload ``label``, a kernel
    measured with options (``['--option', 'sweeps=100']``); None where the label names no
    kernel's options or cannot carry them whole (a hashed one: a path, a list)."""
    from hpcds1mpi import kernels

    kernel = kernel_of(label)
    if kernel is None:
        return None
    pairs = [part.partition(".") for part in label[len(kernel) + 1:].split(SEPARATOR)]
    if any(not key or not dot for key, dot, _ in pairs):
        return None
    try:
        options = typed_options(kernels.get(kernel), {key: word for key, _, word in pairs})
    except Exception:  # noqa: BLE001 - not this kernel's options: no command to give
        return None
    as_written = _label(kernel, {key: _json_or_word(word) for key, _, word in pairs}, "")
    if label not in (options_label(kernel, options_text(options.items())), as_written):
        return None  # read back otherwise than it was written (a hashed label); a model
        # trained before types were applied names a float 2 ``.2``: that one still runs
    return [arg for key, _, word in pairs for arg in ("--option", f"{key}={word}")]


def given_options(kernel, given) -> dict:
    """``hpcds1mpi run``'s ``--option KEY=VALUE`` words as ``kernel`` reads them, checked as a
    plan's extra is (a script from ``recommend --emit`` runs the deck its runs measured, s40
    tester B13).

    Raises:
        ConfigError: a word not KEY=VALUE, a key given twice, or options the kernel refuses.
    """
    from hpcds1mpi.errors import ConfigError

    words = {}
    for text in given:
        key, equals, word = text.partition("=")
        if not equals or not key.strip():
            raise ConfigError(f"--option {text!r}: give KEY=VALUE (stencil: --option sweeps=100)")
        if key.strip() in words:  # the last one would win silently
            raise ConfigError(f"--option {key.strip()} is given twice; give it once")
        words[key.strip()] = word
    return typed_options(kernel, words)


def _json_or_word(word: str):
    """``word``'s JSON value (``2``, ``true``), else the word itself."""
    try:
        return json.loads(word)
    except ValueError:
        return word


def run_deck(name: str, args) -> str | None:
    """The workload an ``hpcds1mpi run NAME ... --option KEY=VALUE`` line runs: the label of
    its options (``stencil+sweeps.100``); None where ``name`` is no kernel or the line gives
    no ``--option`` (a script's line read by ``advise``).

    Raises:
        ConfigError: options ``hpcds1mpi run`` refuses (:func:`given_options`): such a line
            runs no deck, least of all the plain kernel's (s41 tester D14).
    """
    from hpcds1mpi import kernels

    if not kernels.is_kernel(name):
        return None
    args = list(args)
    given = [args[k + 1] if k + 1 < len(args) else "" for k, word in enumerate(args)
             if word == "--option"]
    given += [word[len("--option="):] for word in args if word.startswith("--option=")]
    if not given:
        return None
    return options_label(name, options_text(given_options(kernels.get(name), given).items()))


def no_run_line(label: str) -> str:
    """Why a job script cannot run workload ``label``, a kernel measured with options whose
    label cannot carry them whole (:func:`run_options` None); "" for any other."""
    kernel = kernel_of(label)
    if kernel is None or run_options(label) is not None:
        return ""
    return (f"no job script for {label!r}: its runs were {kernel} with kernel options (the "
            "plan's extra) that its label cannot carry whole, so the script cannot pass them; "
            f"give --program \"hpcds1mpi run {kernel} --size {{size}} --option KEY=VALUE ...\" "
            "with the plan's options")


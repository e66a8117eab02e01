"""The range grammar of a sweep's ``sizes``, ``nodes``, ``ranks_per_node``, ``threads``
(:func:`parse_ints`: ``4``, ``[1, 2, 4]``, ``"1,2,4"``, ``"1..8"``) and of its ``devices`` and
``precisions`` (:func:`parse_words`), as plan files and ``sweep`` / ``tune`` flags give them.
Every slip is refused in one line, never read as something else: an empty item, a range whose
doubling misses the HIGH the user typed, a value out of bounds.
"""

from __future__ import annotations

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.schemas.numbers import decimal_size_hint


def parse_ints(value, what: str, high: int | None = None) -> list[int]:
    """A range of positive integers: ``4``, ``[1, 2, 4]``, ``"1,2,4"`` or ``"1..8"`` (LOW
    doubled until HIGH, both ends included: ``"3..12"`` gives 3, 6, 12; a HIGH that doubling
    never reaches, ``"64..1000"``, is refused rather than cut to 512).

    Args:
        value: the range as given in a plan or on the command line.
        what: what it is, for the error message (``"gemm: sizes"``).
        high: the largest value accepted; None: ``schemas.limits.MAX_SIZE`` for sizes
            (``what`` ends in ``sizes``), else ``MAX_COUNT``.

    Returns:
        The values, sorted, without duplicates.

    Raises:
        ConfigError: not integers, empty, an empty item (``"64,,128"``), a value below 1 or
            above ``high``, a ``LOW..HIGH`` whose doubling misses HIGH.
    """
    from hpcds1mpi.schemas.limits import MAX_COUNT, MAX_SIZE

    if high is None:
        high = MAX_SIZE if what.endswith("sizes") else MAX_COUNT
    if isinstance(value, bool):
        raise ConfigError(f"{what}: expected integers, got {value!r}")
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, str):
        text = value.strip()
        if ".." in text:
            lo_text, hi_text = text.split("..", 1)
            try:
                lo, hi = int(lo_text), int(hi_text)
            except ValueError:
                raise ConfigError(f"{what}: range {value!r} must be LOW..HIGH integers"
                                  + _decimal_hint(text, what)) from None
            if lo < 1 or hi < lo:
                raise ConfigError(f"{what}: range {value!r} is empty or contradictory "
                                  "(need 1 <= LOW <= HIGH)")
            if hi > high:
                shown = hi_text.strip() if len(hi_text.strip()) <= 24 else hi_text.strip()[:20] + "..."
                raise ConfigError(f"{what}: values must be <= {high}, got {shown}; "
                                  "give a smaller value")
            items, v = [], lo
            while v <= hi:
                items.append(v)
                v *= 2
            if items[-1] != hi:  # the user typed HIGH: never drop it silently
                raise ConfigError(f"{what}: range {value!r} doubles from {lo} and misses {hi} "
                                  f"(it stops at {items[-1]}); end it at {items[-1]} or "
                                  f"{items[-1] * 2}, or list the values: {lo},...,{hi}")
        else:
            refuse_empty_items(text, what)
            try:
                items = [int(t) for t in text.split(",") if t.strip()]
            except ValueError:
                raise ConfigError(f"{what}: {value!r} is not a comma-separated list of integers"
                                  + _decimal_hint(text, what)) from None
    elif isinstance(value, (list, tuple)):
        items = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{what}: expected integers, got {v!r}")
            items.append(v)
    else:
        raise ConfigError(f"{what}: expected integers, got {value!r}")
    if not items:
        raise ConfigError(f"{what}: empty range; give at least one value")
    bad = [v for v in items if v < 1]
    if bad:
        raise ConfigError(f"{what}: values must be >= 1, got {bad[0]}")
    huge = [v for v in items if v > high]
    if huge:
        shown = str(huge[0]) if len(str(huge[0])) <= 24 else f"{str(huge[0])[:20]}..."
        raise ConfigError(f"{what}: values must be <= {high}, got {shown}; give a smaller value")
    return sorted(set(items))


def refuse_empty_items(text: str, what: str) -> None:
    """Refuse a list with an empty item (``"64,,128"``, ``"cpu,"``): a slip of the keyboard
    that may have lost a value, so it is not read as the values around it. An empty text is
    left to the caller's "empty" message."""
    items = text.split(",")
    if len(items) > 1 and any(not item.strip() for item in items):
        raise ConfigError(f"{what}: {text!r} has an empty item; remove the stray comma or "
                          "put the missing value in")


def parse_words(value, what: str, allowed: tuple[str, ...], keywords: tuple[str, ...]) -> list[str]:
    """A list of names: ``"cpu,gpu"`` or ``["fp64", "fp32"]``, or one keyword alone.

    Args:
        value: the names as given.
        what: what they are, for the error message.
        allowed: the valid names.
        keywords: words that stand alone for a default (``"available"``, ``"declared"``).

    Returns:
        The names in the order given, without duplicates, or ``[keyword]``.

    Raises:
        ConfigError: empty, or a name outside ``allowed``.
    """
    if isinstance(value, str):
        refuse_empty_items(value, what)
        items = [t.strip() for t in value.split(",") if t.strip()]
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        raise ConfigError(f"{what}: expected names, got {value!r}")
    if not items:
        raise ConfigError(f"{what}: empty; give at least one of {', '.join(allowed)}")
    if len(items) == 1 and items[0] in keywords:
        return items
    for item in items:
        if item not in allowed:
            raise ConfigError(f"{what}: unknown {item!r}; use {', '.join(allowed + keywords)}")
    return list(dict.fromkeys(items))


def _decimal_hint(text: str, what: str) -> str:
    """The hint for decimal sizes (:func:`~hpcds1mpi.schemas.numbers.decimal_size_hint`);
    "" for a count (ranks, threads: no parameter to scale)."""
    return decimal_size_hint(text) if what.endswith("sizes") else ""

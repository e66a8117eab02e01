"""``$`` expansion in a batch script's values: ``$X``, ``${X:-default}``, ``$(( ))`` arithmetic.

:func:`expand` resolves a value from the variables the script set so far (and the scheduler's
own, :mod:`hpcds1mpi.launch.script_reading`), or says it is unknown; what one value and one
whole script may cost is bounded (:data:`MAX_EXPANDED_CHARS`, :class:`ExpansionBudget`), so
no script can make reading it slow or large.
"""

from __future__ import annotations

import ast
import operator
import re

#: The most characters ``$`` expansion may substitute into one value. Job-script values are
#: counts, names and paths; a longer one (``a1=$a0$a0`` doubled line after line would reach
#: 2^59 characters in 60 lines) is read as unknown, as an unresolvable value is.
MAX_EXPANDED_CHARS = 4096
#: The most characters all of one script's expansions may read and write together: with the
#: script's own 256 kB, this bounds the memory and time any script can cost. Real scripts use
#: a few kB of it.
MAX_EXPANSION_WORK = 2_000_000
#: The longest ``$(( ))`` expression evaluated (a count is a few words: ``$((N * PPN))``); a
#: longer one is unknown, which also bounds how deep its syntax tree can nest.
MAX_ARITH_CHARS = 256
#: bash computes in 64-bit signed integers; a number or result outside them is unknown.
_INT64 = 2 ** 63


class ExpansionBudget:
    """What one script's ``$`` expansions may still cost, in characters read and written
    (:data:`MAX_EXPANSION_WORK`); once spent, every further expansion is unknown."""

    def __init__(self, chars: int = MAX_EXPANSION_WORK) -> None:
        self.left = chars
        self.spent = False

    def take(self, chars: int) -> bool:
        """Pay ``chars``; False (and spent from now on) when the budget does not cover it."""
        self.left -= chars
        self.spent = self.spent or self.left < 0
        return not self.spent


def _truncated_div(a: int, b: int) -> int:
    return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # bash: toward zero


def _truncated_mod(a: int, b: int) -> int:
    return a - b * _truncated_div(a, b)  # bash: the sign of the dividend


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.FloorDiv: _truncated_div, ast.Div: _truncated_div, ast.Mod: _truncated_mod}
_ARITH_NUMBER = re.compile(r"-?[0-9]{1,19}")


def _arith(expr: str, scope: dict) -> str | None:
    """Bash integer arithmetic over + - * / %, parentheses, names and numbers; None if it is
    anything else, longer than :data:`MAX_ARITH_CHARS`, or leaves 64 bits."""
    if len(expr) > MAX_ARITH_CHARS:
        return None
    text = re.sub(r"\$\{?([A-Za-z_]\w*)\}?", r"\1", expr)
    names = {n: scope.get(n) for n in re.findall(r"[A-Za-z_]\w*", text)}
    if any(v is None or not _ARITH_NUMBER.fullmatch(str(v)) for v in names.values()):
        return None
    text = re.sub(r"[A-Za-z_]\w*", lambda m: f"({names[m.group(0)]})", text)
    if not re.fullmatch(r"[0-9+\-*/%()\s]*", text):  # no floats, hex, 1_000 or ** (not bash's)
        return None

    def ev(node):  # as deep as the expression, which MAX_ARITH_CHARS bounds
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            value = node.value
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            value = _ARITH[type(node.op)](ev(node.left), ev(node.right))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        else:
            raise ValueError(expr)
        if not -_INT64 <= value < _INT64:
            raise ValueError(expr)
        return value

    try:
        return str(ev(ast.parse(text.strip(), mode="eval").body))
    except (ValueError, SyntaxError, ZeroDivisionError):
        return None


_NAME = r"[A-Za-z_]\w*"
_PARENS = r"\((?:[^()]|\([^()]*\))*\)"  # ( ) with one level of ( ) inside
# Each part inside a $-expression stops at the first character that could end or open another
# ( ) [ ] { } $ `: every character is matched one way only, so a scan is linear whatever the
# text (".*?" would rescan the rest of the value at every unclosed "$((").
_EXPAND_RE = re.compile(
    rf"\$\(\(((?:[^()]|{_PARENS})*)\)\)"                        # 1: $(( arithmetic ))
    r"|\$\[([^\[\]]*)\]"                                       # 2: $[ arithmetic ]
    rf"|\$\{{({_NAME})(?:(:?)-((?:[^{{}}$`]|\$(?=[A-Za-z_]))*))?\}}"  # 3-5: ${X}, ${X:-d}
    rf"|\$({_NAME})"                                           # 6: $X
    r"|\$\(((?:[^()]|\([^()]*\))*)\)|`([^`]*)`"                # 7, 8: $(command), `command`
    r"|\$[({\[]|`")                                            # any other: unknown
_NAME_RE = re.compile(rf"\$({_NAME})")


class _Unknown(Exception):
    """A ``$`` expression that cannot be resolved: the whole value is unknown."""


def expand(value: str, scope: dict, budget: ExpansionBudget | None = None) -> str | None:
    """``value`` with ``$`` expressions replaced from ``scope``; None when one is unknown,
    when they substitute over :data:`MAX_EXPANDED_CHARS`, or when ``budget`` is spent.

    Command substitution is only understood for counting ``$PBS_NODEFILE``'s lines.
    """
    if "$" not in value and "`" not in value:
        return value
    substituted = 0

    def lookup(name: str) -> str:
        got = scope.get(name)
        if got is None:
            raise _Unknown(name)
        return str(got)

    def sub(m: re.Match) -> str:
        nonlocal substituted
        arith = m.group(1) if m.group(1) is not None else m.group(2)
        if arith is not None:
            got = _arith(arith, scope)
        elif m.group(3) is not None:
            got = scope.get(m.group(3))
            if m.group(5) is not None and (got is None or (m.group(4) and got == "")):
                got = _NAME_RE.sub(lambda d: lookup(d.group(1)), m.group(5))  # the default
        elif m.group(6) is not None:
            got = scope.get(m.group(6))
        elif m.group(7) is not None or m.group(8) is not None:
            command = m.group(7) if m.group(7) is not None else m.group(8)
            got = scope.get("PBS_NODEFILE_LINES") if "PBS_NODEFILE" in command and \
                "wc -l" in command else None
        else:
            got = None
        if got is None:
            raise _Unknown(m.group(0))
        substituted += len(str(got))
        if substituted > MAX_EXPANDED_CHARS:
            raise _Unknown(m.group(0))
        return str(got)

    if budget is not None and not budget.take(len(value)):
        return None
    try:
        out = _EXPAND_RE.sub(sub, value)
    except _Unknown:
        return None
    if budget is not None and not budget.take(substituted):
        return None
    return out

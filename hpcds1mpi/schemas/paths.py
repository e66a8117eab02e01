"""The commands' file and folder names: a click path type that refuses an empty value.

``--model "$MODEL"`` with ``MODEL`` unset reaches click as ``--model ''``, which a plain
``click.Path`` takes; the command then read it as no option, so the shipped bundle answered for
the user's own, exit 0. Declared at each parameter, so a command answers alike whether it is
reached through the group or called directly.

Usage::

    @click.option("--model", type=NonEmptyPath())
    @click.option("-o", "--output", type=NonEmptyPath(fix="give the file, or - to print it"))
"""

from __future__ import annotations

import os

import click

__all__ = ["BUNDLE_IS_CODE", "NonEmptyPath"]

#: Said in every ``--model`` help: loading a bundle unpickles it (surrogates/bundle_trust.py
#: refuses one other users could have changed, but a hostile author's runs all the same).
BUNDLE_IS_CODE = "A bundle is Python pickles: loading it runs its code; load only bundles you trust."


class NonEmptyPath(click.Path):
    """A ``click.Path`` whose value may not be empty or blank (a usage error, exit 2).

    Args:
        fix: what to do instead, for the message; by default "give a path" (and, for an
            option, "or leave the option out").
        everything else: as ``click.Path``.
    """

    def __init__(self, *args, fix: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fix = fix

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            option = isinstance(param, click.Option)
            name = max(param.opts, key=len) if option else \
                (param.human_readable_name if param is not None else "path")
            fix = self.fix or ("give a path" + (", or leave the option out" if option else "")
                               + " (an unset shell variable?)")
            raise click.UsageError(f"{name} is empty; {fix}", ctx=ctx)
        if isinstance(value, str) and not self.dir_okay and os.path.isdir(value):
            # click's own "Invalid value for 'PATH': File 'x' is a directory." says no fix
            raise click.UsageError(f"{value}: is a directory; give a file (the path of the "
                                   f"file itself, not its folder)", ctx=ctx)
        return super().convert(value, param, ctx)

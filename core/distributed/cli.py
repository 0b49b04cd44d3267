"""``opweave run``: the launcher as a subcommand of the ``opweave`` command (entry point ``opweave.commands``)."""

from __future__ import annotations


def register(subparsers):
    """Add the ``run`` subcommand; returns its handler."""
    from . import run

    parser = subparsers.add_parser("run", help="run a script on N ranks (MPI), as torchrun does")
    run.add_arguments(parser)
    return run.run_from_args

"""The conformance multi-process section on a CPU whose ``c10d::all_reduce`` has a planted bug (it does not reduce).

Run by test_distributed.py under ``opweave run -n 2``: the section must fail that op and pass the others.
"""

from __future__ import annotations

import sys

import opweave
from opweave_conformance import distributed as section


def all_reduce_without_reducing(tensor, reduce_op, group_name):
    """The planted bug: a copy of the input, not its reduction over the group."""
    return tensor.clone()


class PlantedBug:
    """A plugin registering the broken kernel over the CPU's."""

    @staticmethod
    @opweave.hookimpl
    def opweave_register(registry):
        registry.impl("c10d::all_reduce", all_reduce_without_reducing, backend="cpu")


import opweave.distributed  # noqa: E402,F401  (registers the CPU kernels first)

opweave.backends.register_plugin(PlantedBug, name="planted-bug")
sys.exit(section.job(["--backend", "cpu", "--seed", "5"]))

"""A job that fails on purpose (run by test_distributed.py): ``raise`` or ``timeout`` on rank 1.

``raise``: rank 1 raises while rank 0 waits for it in an all_reduce; the job must end
with rank 1's traceback. ``timeout``: rank 1 never joins; rank 0's all_reduce must
end the job after the group's 2 s timeout.
"""

from __future__ import annotations

import datetime
import sys
import time

import opweave as ow
import opweave.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=2 if mode == "timeout" else 600))
t = ow.ones(4)
dist.all_reduce(t)  # everyone is up
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("planted failure on rank 1")
    time.sleep(3600)  # never joins; the launcher's job must still end
dist.all_reduce(t)
print("unreachable: rank 0 finished the second all_reduce", flush=True)

"""A worker of train.py ends at once when its work is done, even with a gloo operation still finishing: needs
torch (skipped without it). `python3 -m unittest test_teardown` in this folder."""

import os
import socket
import sys
import tempfile
import time
import unittest

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel
except ImportError:
    torch = None


def exited(pid):
    """Whether the process is gone or a zombie (its parent reaps it later)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def rank_process(rank, port, marker):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import train

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model = DistributedDataParallel(torch.nn.Linear(2, 1))  # the reducer keeps a reference to the group
    if rank == 1:
        # Joins rank 0's last operation only once rank 0 is ending, or has ended, as a peer a little behind.
        while not os.path.exists(marker):
            time.sleep(0.01)
        with open(marker) as f:
            pid = int(f.read())
        deadline = time.monotonic() + 5
        while not exited(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            dist.all_reduce(torch.ones(1))
        except RuntimeError:
            pass  # rank 0 gone first: its socket closed
        os._exit(0)
    flag = torch.ones(1)
    work = dist.all_reduce(flag, async_op=True)
    del flag, work  # the operation's tensors are now released by a gloo thread when it finishes
    with open(marker + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(marker + ".tmp", marker)
    train.end_worker()
    del model  # as worker() returning would: the group's last reference


@unittest.skipIf(torch is None, "needs torch")
class EndWorkerTest(unittest.TestCase):
    def test_a_worker_ends_while_a_gloo_operation_is_finishing(self):
        # Found running the example under boa with torch 1.13: a rank's worker hung after its checkpoint
        # on a rescale, deadlocked in destroying the gloo group, until boa's SIGKILL 120 s later.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        marker = os.path.join(tempfile.mkdtemp(), "rank0.pid")
        context = mp.start_processes(rank_process, args=(port, marker), nprocs=2, join=False, start_method="spawn")
        try:
            deadline = time.monotonic() + 120  # torch's import, on a loaded machine
            while not os.path.exists(marker) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue(os.path.exists(marker), "rank 0 never got to its end")
            ended = time.monotonic() + 20
            while any(p.is_alive() for p in context.processes) and time.monotonic() < ended:
                time.sleep(0.05)
            self.assertEqual([p.exitcode for p in context.processes], [0, 0])
        finally:
            for process in context.processes:
                if process.is_alive():
                    process.kill()
                process.join()


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Data-parallel PyTorch training (DDP) that boa can rescale: checkpoint on stop, resume at any width.

On EKS, with a ReadWriteMany volume claim for the checkpoints, such as EFS (without one, a pod of the next
generation finds none and starts over; boa refuses any other claim: docs/jobs.md):

    npx boa jobs submit cifar10 --name ddp --image YOUR_IMAGE --checkpoint-claim YOUR_PVC -- python3 examples/pytorch/train.py --epochs 30

boa's executor starts one process per node with WORLD_SIZE, NNODES, NODE_RANK, NPROC_PER_NODE,
BOA_FIRST_RANK, MASTER_ADDR and MASTER_PORT; this script then starts one worker per GPU of its node (or, when torchrun
started it, it is already one worker). Every worker joins the process group from that environment. When
boa changes the job's width it sends SIGTERM (or the allocation's generation changes): all workers agree
to stop at the same step, rank 0 saves a checkpoint and everyone exits 0; boa starts the new generation,
which resumes from the checkpoint with the same global batch split exactly over the new number of GPUs
(sampling.py), at the first sample of the epoch not yet trained.

The model and data are a small synthetic regression, so the example runs anywhere (CPU with gloo, GPUs
with nccl); put your own in `build_model` and `build_data`. Needs torch; the client is standard library.
"""

import argparse
import math
import os
import re
import signal
import sys
import threading
import urllib.parse
import urllib.request

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, TensorDataset
except ImportError as missing:  # --help still works; a run says what is missing in one line
    torch = None
    TORCH_MISSING = missing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))

from boa_job import BoaConfigError, BoaError, BoaJob  # noqa: E402
from sampling import rank_batches, rank_share  # noqa: E402  (this folder: sys.path[0] for a script)


def whole(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def positive(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def options(argv=None):
    # A bad value is argparse's one line and exit 2 here: --epochs 0 or --samples 0 completed the job
    # untrained, and --poll-seconds 0 was a traceback from every worker's client, restarted until the
    # job failed.
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=whole, default=30, help="data epochs (default 30)")
    parser.add_argument("--stat-epochs", type=whole, default=None,
                        help="statistical epochs of the job's boa class; data epochs map onto them (default: as "
                        "boa says, else 8)")
    parser.add_argument("--global-batch", type=whole, default=256,
                        help="batch over all GPUs, the same at every width (default 256; at least WORLD_SIZE)")
    parser.add_argument("--lr", type=positive, default=0.05)
    parser.add_argument("--samples", type=whole, default=65536,
                        help="synthetic samples (default 65536; at least --global-batch)")
    parser.add_argument("--poll-seconds", type=positive, default=10, help="how often rank 0 polls boa (default 10)")
    parser.add_argument("--checkpoint-dir", default=None,
                        help="default: BOA_CHECKPOINT_DIR (a path or file:// URI), else ./checkpoints/job-BOA_JOB_ID")
    args = parser.parse_args(argv)
    if args.samples < args.global_batch:
        # An epoch is whole global batches: none would be trained.
        parser.error(f"--samples {args.samples} is less than one --global-batch ({args.global_batch})")
    return args


def build_model():
    return nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))


def build_data(samples):
    generator = torch.Generator().manual_seed(0)  # the same data on every worker and every generation
    x = torch.randn(samples, 32, generator=generator)
    y = (x[:, :8].sum(dim=1, keepdim=True) * 0.5).sin() + 0.1 * torch.randn(samples, 1, generator=generator)
    return TensorDataset(x, y)


def checkpoint_directory(args):
    """--checkpoint-dir, else BOA_CHECKPOINT_DIR (a path or a file:// URI), else ./checkpoints/job-ID."""
    given = args.checkpoint_dir or os.environ.get("BOA_CHECKPOINT_DIR")
    if given and given.startswith("file://"):
        return urllib.request.url2pathname(urllib.parse.urlparse(given).path)
    if given and re.match(r"^[a-z][a-z0-9+.-]*://", given, re.IGNORECASE):
        # torch.save to "s3://b/x" would write a local folder named "s3:", lost with the pod.
        print(f"train.py: checkpoint location {given}: torch.save writes local paths; give the job a volume "
              "claim (--checkpoint-claim: on Kubernetes the one place every generation's pods see), a path or a "
              "file:// URI on storage they share, or upload checkpoints yourself", file=sys.stderr)
        sys.exit(2)
    if given:
        return given
    directory = os.path.join("checkpoints", f"job-{os.environ.get('BOA_JOB_ID', 'local')}")
    if os.environ.get("LOCAL_RANK", "0") == "0":  # once per node, also under torchrun
        # Not "or --checkpoint": on Kubernetes that is a URI (s3://...), refused above at every restart
        # until the job failed, or a path inside the pod, lost with it (found in review).
        print(f"train.py: no BOA_CHECKPOINT_DIR: checkpoints go to {os.path.abspath(directory)} on this node "
              "only; a pod of the next generation, or a rank 0 on another node, will not find them and starts "
              "over. On Kubernetes submit with --checkpoint-claim (a ReadWriteMany volume claim such as EFS): "
              "train.py refuses a --checkpoint URI such as s3://... (torch.save writes local paths), and a "
              "--checkpoint path is inside the pod, lost with it", file=sys.stderr, flush=True)
    return directory


def checkpoint_path(args):
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    return os.path.join(args.checkpoint_dir, "checkpoint.pt")


def save(path, model, optimizer, epoch, samples):
    # samples: how many of the epoch's order were trained, a position that holds at any width (and any
    # --global-batch) of the generation resuming from it.
    state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
             "samples": samples}
    with open(path + ".tmp", "wb") as f:
        torch.save(state, f)
        # On disk before the rename: a node lost just after it could otherwise leave an empty checkpoint.
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)  # a kill mid-save leaves the previous checkpoint whole


def worker(local_rank, args):
    job = BoaJob.from_env(poll_seconds=args.poll_seconds)
    world = job.world_size
    # Not NODE_RANK * NPROC_PER_NODE: boa may give nodes different GPU counts (3 + 1).
    rank = int(os.environ.get("RANK", job.first_rank + local_rank))
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    # MASTER_ADDR and MASTER_PORT come from boa's environment (env:// reads them).
    dist.init_process_group("nccl" if use_cuda else "gloo", init_method="env://", rank=rank, world_size=world)
    leader = rank == 0
    if leader:
        job.start_polling()  # one poller per job is enough: the stop decision is shared below
        reporter = Reporter(job)
        # The class's own count (bert has 2): with 8 assumed, every report past its first was refused.
        try:
            stat_epochs = args.stat_epochs or job.stat_epochs() or 8
        except BoaError:  # boa unreachable for now: training goes on, as a report not taken does
            stat_epochs = 8

    module = build_model().to(device)
    optimizer = torch.optim.SGD(module.parameters(), lr=args.lr, momentum=0.9)
    path = checkpoint_path(args)
    # Rank 0 reads the checkpoint and sends it to every rank: other nodes may not see its file, and ranks
    # resuming from different steps (or with other weights or momentum) would hang or silently diverge.
    # For a model too big to pickle through the process group, load it on every rank from shared storage.
    state = [torch.load(path, map_location="cpu") if leader and os.path.exists(path) else None]
    dist.broadcast_object_list(state, src=0)
    epoch, consumed = 0, 0
    if state[0] is not None:
        module.load_state_dict(state[0]["model"])
        optimizer.load_state_dict(state[0]["optimizer"])
        # A checkpoint of an earlier train.py kept the step: as near as it can tell.
        epoch, consumed = state[0]["epoch"], state[0].get("samples", state[0].get("step", 0) * args.global_batch)
    del state
    model = DistributedDataParallel(module, device_ids=[local_rank] if use_cuda else None)
    if leader:
        print(f"rank 0 of WORLD_SIZE={world} (generation {job.generation}): from epoch {epoch} sample {consumed}",
              flush=True)

    data = build_data(args.samples)
    # The same global batch at every width, split exactly: with 256 // world per GPU a width not dividing
    # 256 (boa picks 11, 13, 40, 48) trained fewer samples a step, and a resume by step number at another
    # width lost or repeated thousands of samples of the epoch (found in review).
    _, share = rank_share(args.global_batch, world, rank)
    # Summed, scaled so that DDP's mean over ranks is the mean over the global batch, whose ranks' shares
    # differ by one sample.
    loss_fn = nn.MSELoss(reduction="sum")

    def stop_everywhere():
        # Every rank must leave at the same step, or the others hang in the next all-reduce.
        flag = torch.tensor([1.0 if job.should_stop() else 0.0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return flag.item() > 0

    loss = torch.zeros(())
    while epoch < args.epochs:
        if leader:
            reporter.report(epoch * stat_epochs // args.epochs)
        # One order of the samples per epoch, the same at every width (and on every rank).
        order = torch.randperm(len(data), generator=torch.Generator().manual_seed(epoch)).tolist()
        # Resumed mid-epoch: from the first sample the checkpoint had not trained.
        loader = DataLoader(data, batch_sampler=rank_batches(order, args.global_batch, world, rank, consumed))
        for x, y in loader:
            if stop_everywhere():
                if leader:
                    save(path, model, optimizer, epoch, consumed)
                    print(f"stopping ({job.stop_reason}) at epoch {epoch} sample {consumed}: saved {path}",
                          flush=True)
                dist.barrier()
                end_worker()
            optimizer.zero_grad()
            loss_sum = loss_fn(model(x.to(device)), y.to(device))
            (loss_sum * world / args.global_batch).backward()
            optimizer.step()
            consumed += args.global_batch
            loss = loss_sum.detach() / share
        consumed = 0
        epoch += 1
        if leader:
            save(path, model, optimizer, epoch, 0)
            print(f"epoch {epoch}/{args.epochs} done: WORLD_SIZE={world} loss {loss.item():.4f}", flush=True)

    dist.barrier()
    if leader:
        try:
            job.complete()
        except BoaError as error:
            print(f"could not mark the job complete (rank 0 exiting 0 does it under the executor): {error}")
    end_worker()


def end_worker():
    """Ends a worker whose work is done (checkpoint saved, every rank past the barrier) with exit 0, without
    tearing its process group down. torch (1.13 here; pytorch#56297, fixed in 2025) destroys a gloo group
    holding the GIL and waits for the group's threads, while one of them, freeing the tensors of an
    operation just finished, waits for the GIL: a worker deadlocked so after its checkpoint on a rescale
    and held the job's GPU until boa's SIGKILL at the end of the grace period (found running the example
    under boa). Nothing of the group is needed any more: its sockets close with the process."""
    ignore_sigterm()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def ignore_sigterm():
    """For a process whose work is done. boa stops a completed job's replicas with SIGTERM, often while
    they are still exiting, and the interpreter puts SIGTERM back to its default (death) while it shuts
    down: a worker killed so made the parent's join raise "process 1 terminated with signal SIGTERM"
    after a job that had finished fine. Ignored, the SIGTERM leaves the exit 0 as it is."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class Reporter:
    """Sends rank 0's progress reports from a background thread, so training never waits for boa: with
    boa down a report took 13 s (retries), up to about 75 s with packets dropped, while the other ranks
    waited in the next all-reduce (found in review). One report is out at a time; epochs reached
    meanwhile are not queued, the newest goes next (boa only needs the epoch the job is in)."""

    def __init__(self, job):
        self.job = job
        self._pending = None
        self._changed = threading.Condition()
        threading.Thread(target=self._send, name="boa-report", daemon=True).start()

    def report(self, stat_epoch):
        with self._changed:
            self._pending = stat_epoch
            self._changed.notify()

    def _send(self):
        while True:
            with self._changed:
                while self._pending is None:
                    self._changed.wait()
                stat_epoch, self._pending = self._pending, None
            try:
                self.job.report(stat_epoch)
            except BoaError as error:  # a refused job (a wrong token): boa stops the replicas it wants gone
                print(f"progress not reported: {error}", file=sys.stderr, flush=True)


def main():
    args = options()
    if torch is None:
        print(f"train.py: needs PyTorch (pip install torch): {TORCH_MISSING}", file=sys.stderr)
        return 2
    try:
        # A missing BOA_* variable or a BOA_URL that is no http(s) URL: one line, not a traceback per worker.
        world = BoaJob.from_env(handle_sigterm=False).world_size
    except BoaConfigError as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 2
    # Run by hand as a self-launched job (BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN only), every worker joined the
    # process group with WORLD_SIZE 0 and no rendezvous: a traceback per worker, exit 1 (found in review).
    missing = [name for name in ("WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        print(f"train.py: {', '.join(missing)} not set: boa's executor sets them for the replicas it starts "
              "(boa jobs submit CLASS -- python3 examples/pytorch/train.py ...), torchrun for its workers; a "
              "self-launched job has none: it waits for GPUs with job.wait_for_width() and starts its workers "
              "itself (docs/client.md)", file=sys.stderr)
        return 2
    if world > args.global_batch:
        print(f"train.py: WORLD_SIZE={world} is more GPUs than --global-batch {args.global_batch} has samples; "
              "give a larger --global-batch", file=sys.stderr)
        return 2
    args.checkpoint_dir = checkpoint_directory(args)  # once per node, before any worker starts
    if "LOCAL_RANK" in os.environ:  # torchrun started this process as one worker
        worker(int(os.environ["LOCAL_RANK"]), args)
        return 0
    # boa started one process for this node: one worker per GPU boa gave the job here.
    nproc = int(os.environ.get("NPROC_PER_NODE", "1"))
    workers, stopping = [], []
    # Under boa's local executor this process says a SIGTERM reached it, so its exit 0 is a stop to resume,
    # not the job's end. Only its own pid counts there: the workers' clients, whose pids do not, must not
    # overwrite it, so they do not get the variable.
    sigterm_file = os.environ.pop("BOA_SIGTERM_FILE", None)

    def forward(signum, _frame):
        stopping.append(signum)
        if sigterm_file:
            try:
                with open(sigterm_file, "w") as marker:
                    marker.write(str(os.getpid()))
            except OSError:
                pass  # its folder gone: the exit then reads as the job's end, as without the file
        for process in workers:
            if process.is_alive():
                os.kill(process.pid, signum)

    # Installed before the workers start: a SIGTERM meanwhile must not kill this process and orphan them.
    signal.signal(signal.SIGTERM, forward)
    context = mp.start_processes(worker, args=(args,), nprocs=nproc, join=False, start_method="spawn")
    workers.extend(context.processes)
    if stopping:
        forward(stopping[0], None)
    try:
        while not context.join():
            pass
    except mp.ProcessExitedException as error:
        # A worker still starting (importing torch, joining the group: before its first should_stop(), when
        # its client takes SIGTERM over) dies of boa's SIGTERM with nothing to save: a stop like any other,
        # not a failure. Any other death is one.
        if not stopping or getattr(error, "exit_code", None) != -signal.SIGTERM:
            raise
        print(f"train.py: stopped by SIGTERM while its workers started ({error})", file=sys.stderr, flush=True)
    ignore_sigterm()  # this process is done too: boa stopping it now must not make its exit 0 a death
    return 0


if __name__ == "__main__":
    sys.exit(main())

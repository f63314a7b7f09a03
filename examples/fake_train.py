#!/usr/bin/env python3
"""Fake training that follows boa's job protocol for real, with no GPU and nothing to install.

    npx boa jobs submit cifar10 --name t -- python3 examples/fake_train.py --work-seconds 60

It reads its launch environment, resumes from a checkpoint, does "work" at a speed that grows
sublinearly with WORLD_SIZE, reports its statistical epochs, and on SIGTERM or a new generation writes
a checkpoint and exits 0. After the last epoch rank 0 tells boa the job is complete. Self-launched
(BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN only), it waits for GPUs and follows rescales in-process. The Node
twin is examples/fake-train.mjs (same flags, same checkpoint file); the protocol is in docs/client.md.
"""

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

from boa_job import FINISHED_STATES, BoaConfigError, BoaError, BoaJob  # noqa: E402

SCALING = 0.8  # work per second on w GPUs: w ** 0.8, a simple sublinear speedup
STEP_SECONDS = 0.1


# How often a refused progress report is said again, with how many were not said meanwhile.
REFUSAL_EVERY_SECONDS = 60


def positive(text):
    value = float(text)
    # Finite, as the Node twin reads it: float() takes "inf", an endless run (--work-seconds).
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def whole(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def options(argv):
    env = os.environ.get
    parser = argparse.ArgumentParser(
        description="Fake training that follows boa's job protocol. Needs BOA_URL, BOA_JOB_ID, "
        "BOA_JOB_TOKEN (boa's executor sets them, with BOA_GENERATION and WORLD_SIZE)."
    )
    parser.add_argument("--work-seconds", type=positive, default=env("FAKE_TRAIN_WORK_SECONDS", "600"),
                        help="1-GPU seconds of work in the whole job (FAKE_TRAIN_WORK_SECONDS, default 600)")
    parser.add_argument("--epochs", type=whole, default=env("FAKE_TRAIN_EPOCHS"),
                        help="statistical epochs it is split into (FAKE_TRAIN_EPOCHS, default its class's, as "
                        "boa says)")
    parser.add_argument("--speed", type=positive, default=env("FAKE_TRAIN_SPEED", "1"),
                        help="1-GPU work seconds done per second on one GPU (FAKE_TRAIN_SPEED, default 1)")
    parser.add_argument("--poll-seconds", type=positive, default=env("FAKE_TRAIN_POLL_SECONDS", "1"),
                        help="how often it polls boa's allocation (FAKE_TRAIN_POLL_SECONDS, default 1)")
    return parser.parse_args(argv)


def class_epochs(job):
    """The statistical epochs of the job's class, as boa's allocation says them: a default of 8 had every
    report of a 2-epoch bert job past its first refused (an operator trial). 8 when boa does not say."""
    try:
        epochs = job.stat_epochs()
    except BoaError:
        epochs = None
    if epochs is not None:
        return epochs
    print("fake_train: boa did not say how many statistical epochs the class has: taking 8", file=sys.stderr)
    return 8


def checkpoint_dir(job):
    """BOA_CHECKPOINT_DIR, else a directory of this job's own under the OS temp dir (removed when done)."""
    given = job.checkpoint_dir
    if given and given.startswith("file://"):
        return urllib.request.url2pathname(urllib.parse.urlparse(given).path), False
    if given and re.match(r"^[a-z][a-z0-9+.-]*://", given, re.IGNORECASE):
        print(
            f"fake_train: BOA_CHECKPOINT_DIR is {given}: this example keeps its checkpoint in a local directory "
            "(a path or a file:// URI); give the job a volume claim or a path instead",
            file=sys.stderr,
        )
        sys.exit(2)
    if given:
        return given, False
    # The token's hash keeps job 1 of one service apart from job 1 of another.
    tag = hashlib.sha256(job.token.encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), "boa-fake-train", f"job-{job.job_id}-{tag}"), True


def read_checkpoint(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        print(f"fake_train: ignoring unreadable checkpoint {path}: {error}", file=sys.stderr)
        return None


def write_checkpoint(directory, path, state):
    os.makedirs(directory, exist_ok=True)
    # Write then rename: a kill mid-write leaves the previous checkpoint whole.
    with open(path + ".tmp", "w") as f:
        json.dump(state, f)
        f.write("\n")
    os.replace(path + ".tmp", path)


def remove_temporary(directory):
    """The job's temp folder, and the shared boa-fake-train folder above it once no other job's is left."""
    shutil.rmtree(directory, ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(directory))
    except OSError:
        pass  # another job's folder is still there (or it is gone already)


def main(argv=None):
    opts = options(argv)
    try:
        job = BoaJob.from_env(poll_seconds=opts.poll_seconds)
    except BoaConfigError as error:
        print(f"fake_train: {error}", file=sys.stderr)
        return 2
    leader = job.node_rank == 0
    self_launched = job.generation is None
    directory, temporary = checkpoint_dir(job)
    path = os.path.join(directory, "checkpoint.json")
    epoch = 0

    # Progress reports must not slow training: boa may be restarting (a report retries for about 15 s).
    # So they go in a background thread, one at a time: a report due while one is still out is skipped,
    # and the next carries the epoch reached by then. One boa does not take (it knows fewer epochs than
    # this run) the client logs and returns; only a refused job (a wrong token) raises.
    in_flight = [None]
    # The last report skipped, sent at the end if no later one went: the last epoch's, due as the run
    # ends, was otherwise lost whenever one was still out, and boa had the job an epoch behind.
    skipped = [None]

    # A refused report (a wrong token, a stranger at BOA_URL for a while) is said at once, then at most once
    # a minute with the count since: it printed one line per report, every 5 s (found in review).
    refusals = {"said_at": None, "unsaid": 0}

    def send(stat_epoch, work_done):
        try:
            job.report(stat_epoch, work_done)
        except BoaError as error:
            now = time.monotonic()
            if refusals["said_at"] is not None and now - refusals["said_at"] < REFUSAL_EVERY_SECONDS:
                refusals["unsaid"] += 1
                return
            more = f" ({refusals['unsaid']} more since the last said)" if refusals["unsaid"] else ""
            refusals["said_at"], refusals["unsaid"] = now, 0
            print(f"fake_train: progress not reported: {error}{more}", file=sys.stderr)

    def report(work_done):
        if not leader:
            return
        if in_flight[0] is not None and in_flight[0].is_alive():
            skipped[0] = (epoch, work_done)
            return
        skipped[0] = None
        in_flight[0] = threading.Thread(target=send, args=(epoch, work_done), daemon=True)
        in_flight[0].start()

    if self_launched:
        print(f"fake_train job {job.job_id}: waiting for GPUs from boa at {job.url} (boa gives them at a tick once it "
              "has nodes)", flush=True)
        try:
            job.wait_for_width()
        except BoaError as error:
            # SIGTERM, or the job ended, before it got GPUs: a stop like any other. Else a failure.
            if not job.should_stop():
                raise
            print(f"fake_train: {error}; exiting", flush=True)
            return 0
    if opts.epochs is None:
        opts.epochs = class_epochs(job)
    epoch_work = opts.work_seconds / opts.epochs
    saved = read_checkpoint(path)
    epoch, work_in_epoch = resume_point(saved, opts.epochs, opts.work_seconds)
    resumed = saved is not None
    job.start_polling()

    while True:
        world = job.world_size
        rate = opts.speed * world**SCALING
        print(
            f"fake_train job {job.job_id} generation {job.generation}: WORLD_SIZE={world} NNODES={job.nnodes} "
            f"NODE_RANK={job.node_rank}, {'resumed' if resumed else 'starting'} {in_epoch(epoch, opts.epochs)} "
            f"({work_in_epoch:.1f} s of its work done)",
            flush=True,
        )
        report(work_in_epoch)
        last_report = started = time.monotonic()
        while epoch < opts.epochs and not job.should_stop():
            time.sleep(STEP_SECONDS)
            work_in_epoch += rate * STEP_SECONDS
            if work_in_epoch >= epoch_work:
                epoch += 1
                work_in_epoch = 0.0
                print(
                    f"epoch {epoch}/{opts.epochs} done: WORLD_SIZE={world} NODE_RANK={job.node_rank} "
                    f"generation={job.generation} after {time.monotonic() - started:.1f} s",
                    flush=True,
                )
                if leader:
                    write_checkpoint(directory, path, checkpoint(epoch, opts.epochs, work_in_epoch, job, world))
                if epoch < opts.epochs:
                    report(0)
                last_report = time.monotonic()
            elif time.monotonic() - last_report >= 5:
                report(work_in_epoch)
                last_report = time.monotonic()
        if epoch >= opts.epochs:
            break
        # boa sends a cancel as a SIGTERM too, often before a poll has seen it: asked afresh, as
        # docs/client.md advises (after a SIGTERM the client waits at most 2 s for an answer; none: a
        # checkpoint, to be safe).
        ended = (job.last_allocation or {}).get("state")
        if job.stop_reason == "SIGTERM":
            try:
                ended = job.allocation().get("state")
            except BoaError:
                pass
        if ended in FINISHED_STATES:
            # Cancelled (or ended some other way): no generation will ever resume from a checkpoint.
            said = f"stopping ({job.stop_reason}) {in_epoch(epoch, opts.epochs)}"
            print(f"{said}: the job has ended, no checkpoint written", flush=True)
            if leader and temporary:
                remove_temporary(directory)
            return 0
        if leader:
            write_checkpoint(directory, path, checkpoint(epoch, opts.epochs, work_in_epoch, job, world))
        where = f"written to {path}" if leader else "left to rank 0"
        print(
            f"stopping ({job.stop_reason}) {in_epoch(epoch, opts.epochs)} with {work_in_epoch:.1f} s "
            f"of its work done: checkpoint {where}",
            flush=True,
        )
        # A self-launched job follows a rescale itself; under the executor boa starts the new replicas.
        if not self_launched or job.stop_reason == "SIGTERM":
            return 0
        resumed = True
        try:
            job.wait_for_width()
        except BoaError as error:
            print(f"fake_train: {error}; exiting", flush=True)
            return 0

    print(f"all {opts.epochs} epochs done: WORLD_SIZE={job.world_size} NODE_RANK={job.node_rank}", flush=True)
    if leader:
        if in_flight[0] is not None:
            in_flight[0].join()  # not overtaken by a report of an earlier epoch
        if skipped[0] is not None:
            send(*skipped[0])
        try:
            job.complete()
            print(f"job {job.job_id} complete", flush=True)
        except BoaError as error:
            # Under the executor rank 0 exiting 0 completes the job anyway.
            print(f"fake_train: could not mark the job complete: {error}", file=sys.stderr)
        if temporary:
            remove_temporary(directory)
    return 0


def in_epoch(done, epochs):
    """Where a run is, given the epochs done: counted from 1, as `boa jobs list` and `show` count (the log
    said "resumed at epoch 3/8" where boa showed epoch 4: found in a CLI review)."""
    return f"in epoch {done + 1}/{epochs}" if done < epochs else f"after its last epoch ({epochs}/{epochs})"


def checkpoint(epoch, epochs, work_in_epoch, job, world):
    return {"epoch": epoch, "epochs": epochs, "workInEpoch": work_in_epoch, "generation": job.generation,
            "worldSize": world}


def resume_point(saved, epochs, work_seconds):
    """(epoch, work done in it) to resume at, in this run's epochs. A checkpoint written with another count
    (a generation that started while boa was unreachable took 8, a bert job's next one boa's 2) is
    converted through the work it had done: its epoch 5 of 8 read as epoch 5 of 2 ended the job with
    3/8 of its work undone, and epoch 1 of 2 read as 1 of 8 did 3/8 again (found in review)."""
    if not saved:
        return 0, 0.0
    epoch, work = int(saved.get("epoch", 0)), float(saved.get("workInEpoch", 0))
    was = saved.get("epochs")
    if isinstance(was, int) and not isinstance(was, bool) and was >= 1 and was != epochs:
        done = epoch * work_seconds / was + work
        epoch_work = work_seconds / epochs
        epoch = int(done / epoch_work + 1e-9)
        work = max(0.0, done - epoch * epoch_work)
    if epoch >= epochs:
        return epochs, 0.0
    return epoch, work


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BoaError as error:
        # boa's refusal (a wrong token, a job gone) is one line; anything else is a bug: its traceback.
        print(f"fake_train: {error}", file=sys.stderr)
        sys.exit(1)

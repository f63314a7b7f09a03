"""Tests of train.py's parts that run without torch: run by test/clients/examples.test.ts, or
`python3 -m unittest test_train` in this folder."""

import argparse
import contextlib
import http.server
import io
import json
import os
import socket
import threading
import time
import unittest
from unittest import mock

import train
from boa_job import BoaJob


class ReporterTest(unittest.TestCase):
    def test_a_report_never_holds_training_up_while_boa_does_not_answer(self):
        # Reported in the training loop, rank 0 waited 13 s for a boa that was down, and the other ranks
        # with it in the next all-reduce (found in review).
        silent = socket.socket()
        self.addCleanup(silent.close)
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # never accepted: connected, then no answer
        job = BoaJob(f"http://127.0.0.1:{silent.getsockname()[1]}", 3, "tok", 1, handle_sigterm=False,
                     timeout_seconds=5, retries=0)
        started = time.monotonic()
        reporter = train.Reporter(job)
        for stat_epoch in range(8):
            reporter.report(stat_epoch)
        self.assertLess(time.monotonic() - started, 0.5)

    def test_the_newest_epoch_goes_out_after_the_report_in_flight(self):
        seen = []

        class Slow(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])))["statEpoch"])
                time.sleep(0.6)  # the loop reaches further epochs meanwhile
                data = b'{"jobId":3,"state":"running","width":1,"nodes":[],"generation":1,"statEpoch":0}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        job = BoaJob(f"http://127.0.0.1:{server.server_port}", 3, "tok", 1, handle_sigterm=False)
        reporter = train.Reporter(job)
        for stat_epoch in (1, 2, 3):
            reporter.report(stat_epoch)
        deadline = time.monotonic() + 5
        while (not seen or seen[-1] != 3) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(seen[-1], 3)
        # One at a time, never older than one sent before it; the epochs passed by meanwhile are skipped.
        self.assertEqual(seen, sorted(seen))
        self.assertLessEqual(len(seen), 2)


class OptionsTest(unittest.TestCase):
    def refusal(self, *argv):
        said = io.StringIO()
        with contextlib.redirect_stderr(said), self.assertRaises(SystemExit) as exit_:
            train.options(list(argv))
        self.assertEqual(exit_.exception.code, 2)
        return said.getvalue()

    def test_a_value_no_run_can_use_is_one_line_and_exit_2(self):
        # --epochs 0 or --samples 0 completed the job untrained; --poll-seconds 0 was a traceback from
        # every worker's client (exit 1, restarted until the job failed).
        for flag, value, rule in (("--epochs", "0", "an integer >= 1"), ("--samples", "-5", "an integer >= 1"),
                                  ("--global-batch", "many", "an integer >= 1"),
                                  ("--stat-epochs", "0", "an integer >= 1"),
                                  ("--poll-seconds", "0", "a number > 0"), ("--poll-seconds", "inf", "a number > 0"),
                                  ("--lr", "nan", "a number > 0")):
            with self.subTest(flag=flag, value=value):
                said = self.refusal(flag, value)
                self.assertIn(f"argument {flag}: must be {rule}, got '{value}'", said)
                self.assertNotIn("Traceback", said)
        said = self.refusal("--samples", "100")
        self.assertIn("--samples 100 is less than one --global-batch (256)", said)

    def test_the_defaults_and_good_values_are_taken(self):
        self.assertEqual(vars(train.options([])), {
            "epochs": 30, "stat_epochs": None, "global_batch": 256, "lr": 0.05, "samples": 65536,
            "poll_seconds": 10, "checkpoint_dir": None})
        args = train.options(["--epochs", "8", "--samples", "2048", "--poll-seconds", "0.2", "--global-batch", "64"])
        self.assertEqual((args.epochs, args.samples, args.poll_seconds, args.global_batch), (8, 2048, 0.2, 64))


class LaunchEnvironmentTest(unittest.TestCase):
    def run_main(self, env, argv=()):
        """train.main()'s exit code and stderr under exactly env (torch stood in for: main only asks
        whether it is there before it starts workers)."""
        said = io.StringIO()
        with mock.patch.dict(os.environ, env, clear=True), mock.patch.object(train, "torch", object()), \
                mock.patch("sys.argv", ["train.py", *argv]), contextlib.redirect_stderr(said):
            try:
                code = train.main()
            except SystemExit as exit_:
                code = exit_.code
            except Exception as error:  # noqa: BLE001  the failure to report, not to raise
                code = f"raised {error!r}"
        return code, said.getvalue()

    def test_run_by_hand_as_a_self_launched_job_it_says_what_is_missing_in_one_line(self):
        # The variables a self-launched job has: every worker joined the process group with WORLD_SIZE 0
        # and no MASTER_ADDR, a traceback per worker and exit 1 (found in review).
        env = {"BOA_URL": "http://127.0.0.1:9", "BOA_JOB_ID": "2", "BOA_JOB_TOKEN": "tok", "PATH": os.defpath}
        code, said = self.run_main(env)
        self.assertEqual(code, 2)
        self.assertIn("train.py: WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set: boa's executor sets them", said)
        self.assertIn("wait_for_width()", said)
        self.assertNotIn("Traceback", said)
        self.assertEqual(len(said.strip().splitlines()), 1)
        # Only the one missing is named.
        code, said = self.run_main({**env, "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"})
        self.assertEqual(code, 2)
        self.assertIn("train.py: MASTER_PORT not set", said)


class CheckpointDirectoryTest(unittest.TestCase):
    def where(self, env, flag=None):
        """checkpoint_directory's answer (or SystemExit) and what it said, under env."""
        said = io.StringIO()
        with mock.patch.dict(os.environ, env), contextlib.redirect_stderr(said):
            for name in ("BOA_CHECKPOINT_DIR", "LOCAL_RANK"):
                if name not in env:
                    os.environ.pop(name, None)
            try:
                return train.checkpoint_directory(argparse.Namespace(checkpoint_dir=flag)), said.getvalue()
            except SystemExit as exit_:
                return exit_, said.getvalue()

    def test_without_a_checkpoint_location_it_points_kubernetes_to_a_claim_not_to_a_uri(self):
        # The hint said "submit with --checkpoint-claim or --checkpoint": on Kubernetes --checkpoint is
        # a URI, which train.py refuses with exit 2, restarted up to maxRestarts times, then failed.
        where, said = self.where({"BOA_JOB_ID": "7"})
        self.assertEqual(where, os.path.join("checkpoints", "job-7"))
        self.assertIn("On Kubernetes submit with --checkpoint-claim (a ReadWriteMany volume claim", said)
        self.assertIn("refuses a --checkpoint URI such as s3://", said)
        self.assertNotIn("or --checkpoint)", said)
        # Following the hint: the claim's mount is a path, taken as it is.
        self.assertEqual(self.where({"BOA_CHECKPOINT_DIR": "/checkpoint"}), ("/checkpoint", ""))
        self.assertEqual(self.where({"BOA_CHECKPOINT_DIR": "file:///mnt/ckpt"})[0], "/mnt/ckpt")

    def test_a_remote_uri_is_refused_in_one_line_naming_the_claim(self):
        exit_, said = self.where({"BOA_CHECKPOINT_DIR": "s3://bucket/run"})
        self.assertEqual(exit_.code, 2)
        self.assertIn("checkpoint location s3://bucket/run: torch.save writes local paths", said)
        self.assertIn("--checkpoint-claim", said)


if __name__ == "__main__":
    unittest.main()

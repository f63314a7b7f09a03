"""Tests of train.py's parts that run without torch: run by test/clients/examples.test.ts, or
`python3 -m unittest test_train` in this folder."""

import http.server
import json
import socket
import threading
import time
import unittest

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


if __name__ == "__main__":
    unittest.main()

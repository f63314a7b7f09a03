"""The failure-mode review's cases for boa_job.py, each also held for the Node client.

Run by test/clients/failure-review.test.ts against a real boa service (BOA_TEST_URL), with the helpers
of test_boa_job.py.
"""

import socket
import threading
import time
import unittest

from boa_job import BoaConfigError, BoaJob, BoaUnavailable
from test_boa_job import URL, QuickClients, control, wait_until


def dripping(test, part):
    """A server (a proxy gone wrong) that answers a byte every 200 ms for a minute: its headers, or
    after them its body. Every read gets a byte well within a client's timeout. Returns its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def drip(conn):
        with conn:
            try:
                conn.recv(65536)
                if part == "body":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300\r\n\r\n")
                else:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                for _ in range(300):
                    if done.wait(0.2):
                        return
                    conn.sendall(b" ")
            except OSError:
                pass  # the client hung up

    def accept():
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    test.addCleanup(listener.close)
    test.addCleanup(done.set)
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


@unittest.skipUnless(URL, "BOA_TEST_URL is not set: run through test/clients/failure-review.test.ts")
class FailureReviewTest(QuickClients, unittest.TestCase):
    def setUp(self):
        control("/__test/fail-next", {"count": 0})
        control("/__test/requests")


    def test_an_epoch_boa_would_refuse_is_not_sent_nor_kept_in_place_of_one_kept_in_an_outage(self):
        job = control("/__test/job")
        client = self.client(job)
        most = client.allocation()["statEpochs"] - 1
        control("/__test/fail-next", {"count": 2, "status": 503})  # the report and its one retry
        with self.assertLogs("boa_job", "WARNING"):
            client.report(2)  # kept, to send again
        self.posts(job)
        # Still down: each of these, sent, failed too and replaced the report kept (2.5 and most + 1
        # are not below 2), which boa then refused: epoch 2 was lost.
        control("/__test/fail-next", {"count": 8, "status": 503})
        with self.assertLogs("boa_job", "WARNING") as logged:
            for bad in (2.5, most + 1, -1, "3", True):  # True went as epoch 1
                self.assertEqual(client.report(bad), client.last_allocation)
        self.assertEqual(self.posts(job), 0)
        self.assertEqual(len(logged.output), 5)
        self.assertIn(
            f"progress report not taken, training goes on: stat_epoch must be an integer from 0 to {most}, "
            "got 2.5: nothing sent",
            logged.output[0],
        )
        self.assertIn(f"got {most + 1}: nothing sent", logged.output[1])
        self.assertIn("got -1: nothing sent", logged.output[2])
        self.assertIn("got '3': nothing sent", logged.output[3])
        self.assertIn("got True: nothing sent", logged.output[4])
        control("/__test/fail-next", {"count": 0})
        client.start_polling()
        self.assertTrue(wait_until(lambda: self.view(job)["statEpoch"] == 2))
        # A float with no fraction is an integer to boa (JSON's 3.0): taken, as in the Node client.
        self.assertEqual(client.report(3.0)["statEpoch"], 3)

    def test_a_work_figure_that_is_no_number_is_left_out_and_the_epoch_reported(self):
        # float() raised out of report() for "abc" or 10**400, and training stopped; the Node client
        # sent a string, which boa refused with the epoch.
        job = control("/__test/job")
        client = self.client(job)
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.report(1, "abc")["statEpoch"], 1)
            self.assertEqual(client.report(2, 10**400)["statEpoch"], 2)
            self.assertEqual(client.report(3, "3.5")["statEpoch"], 3)
        self.assertEqual(self.view(job)["statEpoch"], 3)
        self.assertIn(
            "work_done_seconds must be a number from 0 to 1e+09, got 'abc': stat_epoch 1 reported without it",
            logged.output[0],
        )
        self.assertIn("got 1000000000000", logged.output[1])
        self.assertIn("got '3.5': stat_epoch 3 reported without it", logged.output[2])
        self.assertEqual(client.report(4, 7)["statEpoch"], 4)
        self.assertEqual(self.view(job)["workDoneSeconds"], 7)

    def test_a_request_whose_answer_comes_a_byte_at_a_time_gives_up_at_its_timeout(self):
        # urllib's timeout is each read's: a byte every 200 ms held a request with a 1 s timeout for as
        # long as the server went on (30 s in the review); the Node client's timeout is the request's.
        for part in ("headers", "body"):
            with self.subTest(part=part):
                client = BoaJob(dripping(self, part), 1, "t", timeout_seconds=1, retries=0, handle_sigterm=False)
                self.addCleanup(client.close)
                started = time.monotonic()
                with self.assertRaises(BoaUnavailable) as raised:
                    client.allocation()
                self.assertEqual(raised.exception.reason, "timed out after 1 s")
                self.assertLess(time.monotonic() - started, 10)

    def test_a_job_id_generation_or_option_no_request_can_work_with_is_refused_by_name(self):
        # Before: int(1.5) made job 1's client, "abc" raised a ValueError naming nothing, BOA_JOB_ID=0 or
        # -3 reached boa as a refused job, retries=-1 retried for ever, poll_seconds=0 polled boa in a
        # busy loop, timeout_seconds=0 failed every request as "unreachable".
        def made(**options):
            settings = dict(url=URL, job_id=3, token="t", handle_sigterm=False)
            settings.update(options)
            return lambda: BoaJob(**settings)

        def env(**more):
            values = {"BOA_URL": URL, "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "t", **more}
            return lambda: BoaJob.from_env(values, handle_sigterm=False)

        cases = [
            (made(job_id="abc"), "job_id must be a whole number from 1, got 'abc'"),
            (made(job_id=1.5), "job_id must be a whole number from 1, got 1.5"),
            (made(generation=-1), "generation must be a whole number from 0, got -1"),
            (env(BOA_JOB_ID="0"), "BOA_JOB_ID must be a whole number from 1, got 0"),
            (env(BOA_JOB_ID="-3"), "BOA_JOB_ID must be a whole number from 1, got -3"),
            (env(BOA_GENERATION="-1"), "BOA_GENERATION must be a whole number from 0, got -1"),
            (made(retries=-1), "retries must be a whole number from 0, got -1"),
            (made(poll_seconds=0), "poll_seconds must be a number above 0, got 0"),
            (made(timeout_seconds=float("nan")), "timeout_seconds must be a number above 0, got nan"),
            (made(backoff_seconds=-1), "backoff_seconds must be a number from 0, got -1"),
            (made(warn_every_seconds="60"), "warn_every_seconds must be a number from 0, got '60'"),
        ]
        for make, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(BoaConfigError) as raised:
                    make()
                self.assertEqual(str(raised.exception), message)
        # What was taken still is: a string of digits, 0 retries, no warning spacing.
        client = made(job_id="3", generation="0", retries=0, warn_every_seconds=0)()
        self.addCleanup(client.close)
        self.assertEqual((client.job_id, client.generation), (3, 0))

    def test_a_retry_after_not_above_0_is_waited_as_the_backoff(self):
        # Read as a wait of -5 s (none) the retries went at once; the Node client backs off.
        job = control("/__test/job")
        client = self.client(job, backoff_seconds=1.0)
        for header in (-5, "nan"):
            with self.subTest(header=header):
                control("/__test/fail-next", {"count": 1, "status": 503, "retryAfter": header})
                started = time.monotonic()
                client.allocation()  # the 503, then its retry, taken
                self.assertGreaterEqual(time.monotonic() - started, 0.5)  # the backoff's least, with jitter


if __name__ == "__main__":
    unittest.main()

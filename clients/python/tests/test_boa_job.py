"""Tests of boa_job.py against a real boa service.

Run by test/clients/python-client.test.ts, which starts the service and passes its URL in
BOA_TEST_URL. The service also answers a few /__test/* routes (test/clients/served.ts) that move its
clock, make a running job, count requests and inject 5xx answers.
"""

import http.server
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from unittest import mock

from boa_job import BoaConfigError, BoaError, BoaHTTPError, BoaJob, BoaUnavailable

URL = os.environ.get("BOA_TEST_URL", "")


def control(path, body=None):
    data = json.dumps(body or {}).encode()
    request = urllib.request.Request(
        URL + path, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"test route {path} failed: {error.read().decode()}") from None


def api_get(path, token):
    request = urllib.request.Request(URL + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def wait_until(predicate, seconds=20.0):
    """Whether `predicate` holds within `seconds` (returns as soon as it does; a loaded machine is slow)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def stranger(test, status, body, port=0):
    """Something other than boa at BOA_URL (a proxy, another service) answering every request with
    status and the JSON body; stopped when the test ends. Returns its URL."""
    return answering(test, lambda: (status, body), port)


def serve(test, handler, host="127.0.0.1", port=0):
    """A server of handler on its own thread, stopped when the test ends. Returns the server."""
    server = http.server.ThreadingHTTPServer((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    return server


def reply(handler, status, data):
    """Answers the handler's request with status and the JSON bytes data."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def answering(test, answer, port=0):
    """A server answering each request with answer()'s (status, JSON body); stopped when the test
    ends. Returns its URL."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = answer()
            data = json.dumps(body).encode()
            reply(self, status, data)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    return f"http://127.0.0.1:{serve(test, Answer, port=port).server_port}"


def forwarding(test):
    """boa at a second address: a server passing every request on to it; stopped when the test ends.
    Returns the server, its URL and the requests it passed on ("METHOD path")."""
    seen = []

    class Forward(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(f"{self.command} {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            request = urllib.request.Request(
                URL + self.path,
                data=self.rfile.read(length) if length else None,
                method=self.command,
                headers={"Authorization": self.headers["Authorization"], "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    status, data = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, data = error.code, error.read()
            reply(self, status, data)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = serve(test, Forward)
    return server, f"http://127.0.0.1:{server.server_port}", seen


def url_file(test, url):
    """A BOA_URL_FILE holding url, as boa's local executor writes one; removed when the test ends."""
    folder = tempfile.mkdtemp(prefix="boa-url-file-")
    test.addCleanup(shutil.rmtree, folder, True)
    path = os.path.join(folder, "0.url")
    with open(path, "w") as file:
        file.write(url + "\n")
    return path


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def executor_env(job):
    """What boa's executor gives a replica of this job (one node)."""
    return {
        "BOA_URL": URL,
        "BOA_JOB_ID": str(job["id"]),
        "BOA_JOB_TOKEN": job["token"],
        "BOA_GENERATION": str(job["generation"]),
        "WORLD_SIZE": str(job["width"]),
        "NNODES": "1",
        "NODE_RANK": "0",
        "NPROC_PER_NODE": str(job["width"]),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29500",
    }


class QuickClients:
    """For a TestCase of the report tests: clients of a served boa's job that poll and retry quickly,
    closed after each test, and what boa shows of the job."""

    def client(self, job, **options):
        settings = dict(poll_seconds=0.05, backoff_seconds=0.01, retries=1, handle_sigterm=False,
                        warn_every_seconds=0)
        settings.update(options)
        made = BoaJob.from_env(executor_env(job), **settings)
        self.addCleanup(made.close)
        return made

    def view(self, job):
        return api_get(f"/v1/jobs/{job['id']}", job["token"])

    def posts(self, job):
        return control("/__test/requests").get(f"POST /v1/jobs/{job['id']}/progress", 0)


@unittest.skipUnless(URL, "BOA_TEST_URL is not set: run through test/clients/python-client.test.ts")
class BoaJobTest(unittest.TestCase):
    def setUp(self):
        self.sigterm = signal.getsignal(signal.SIGTERM)
        self.clients = []
        control("/__test/fail-next", {"count": 0})
        control("/__test/requests")  # resets the request counts

    def tearDown(self):
        for client in self.clients:
            client.close()
        signal.signal(signal.SIGTERM, self.sigterm)

    def client(self, job, **options):
        options.setdefault("poll_seconds", 0.05)
        options.setdefault("backoff_seconds", 0.05)
        made = BoaJob.from_env(executor_env(job), **options)
        self.clients.append(made)
        return made

    def test_missing_environment_is_named(self):
        with self.assertRaisesRegex(BoaConfigError, "BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN"):
            BoaJob.from_env({})
        with self.assertRaisesRegex(BoaConfigError, r"variable BOA_JOB_TOKEN:"):
            BoaJob.from_env({"BOA_URL": URL, "BOA_JOB_ID": "3"})
        with self.assertRaisesRegex(BoaConfigError, "BOA_GENERATION must be an integer, got 'x'"):
            BoaJob.from_env({"BOA_URL": URL, "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "t", "BOA_GENERATION": "x"})

    def test_integers_are_read_as_the_node_client_reads_them(self):
        # int() alone took these, which the Node client refuses: one environment read two ways.
        env = {"BOA_URL": URL, "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "t"}
        for raw in (" 4", "4 ", "+4", "4_0", "\u0664", "4.0"):
            with self.subTest(raw=raw), self.assertRaisesRegex(BoaConfigError, "BOA_GENERATION must be an integer"):
                BoaJob.from_env({**env, "BOA_GENERATION": raw}, handle_sigterm=False)
        self.assertEqual(BoaJob.from_env({**env, "BOA_GENERATION": "7"}, handle_sigterm=False).generation, 7)
        # An integer, but no generation (boa refused every report sending it): test_failure_review.py.
        with self.assertRaisesRegex(BoaConfigError, "BOA_GENERATION must be a whole number from 0, got -2"):
            BoaJob.from_env({**env, "BOA_GENERATION": "-2"}, handle_sigterm=False)

    def test_an_empty_master_addr_is_read_as_unset_as_the_node_client_reads_it(self):
        env = {"BOA_URL": URL, "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "t"}
        self.assertEqual(BoaJob.from_env({**env, "MASTER_ADDR": ""}, handle_sigterm=False).master_addr, "127.0.0.1")
        self.assertEqual(BoaJob.from_env({**env, "MASTER_ADDR": "10.0.0.7"}, handle_sigterm=False).master_addr, "10.0.0.7")

    def test_a_url_that_is_not_absolute_http_is_refused_at_once(self):
        # Every request to it would fail like a boa restarting, retried for ever with nothing said.
        env = {"BOA_URL": "127.0.0.1:8080", "BOA_JOB_ID": "12", "BOA_JOB_TOKEN": "x"}
        with self.assertRaises(BoaConfigError) as raised:
            BoaJob.from_env(env)
        self.assertEqual(
            str(raised.exception),
            "BOA_URL must be an absolute http:// or https:// URL such as http://127.0.0.1:8080, got "
            "'127.0.0.1:8080': it has no scheme (did you mean 'http://127.0.0.1:8080'?)",
        )
        for url, problem in (
            ("localhost:8080", r"^url must be .* got 'localhost:8080': it has no scheme"),
            ("ftp://boa:21", "its scheme is ftp://"),
            ("http:/boa:8080", "must be followed by //"),
            ("http://:8080", "it has no host"),
            ("http://boa:99999", "its port is not a number from 1 to 65535"),
            ("http://boa:80a", "its port is not a number"),
            ("http://boa:8080/?x=1", "a query or fragment"),
            ("http://user:pw@boa:8080", "a user or password"),
            ("http://boa :8080", "whitespace"),
        ):
            with self.subTest(url=url), self.assertRaisesRegex(BoaConfigError, problem):
                BoaJob(url, 1, "t", handle_sigterm=False)
        for url in ("http://127.0.0.1:8080", "HTTPS://boa.example:8443/prefix/", "http://[::1]:8080"):
            BoaJob(url, 1, "t", handle_sigterm=False)

    def test_reads_the_allocation_and_the_launch_environment(self):
        job = control("/__test/job")
        client = self.client(job)
        alloc = client.allocation()
        self.assertEqual(alloc["jobId"], job["id"])
        self.assertEqual(alloc["state"], "running")
        self.assertEqual(alloc["width"], job["width"])
        self.assertEqual(alloc["generation"], job["generation"])
        self.assertEqual(sum(node["gpus"] for node in alloc["nodes"]), job["width"])
        self.assertEqual(client.world_size, job["width"])
        self.assertEqual((client.nnodes, client.node_rank, client.master_port), (1, 0, 29500))
        self.assertIsNone(client.checkpoint_dir)
        self.assertFalse(client.should_stop())
        # Rank 1 of a 3 + 1 placement: its worker is global rank 3, not NODE_RANK * NPROC_PER_NODE = 1.
        second = dict(executor_env(job), NNODES="2", NODE_RANK="1", NPROC_PER_NODE="1", BOA_FIRST_RANK="3")
        self.assertEqual(BoaJob.from_env(second, handle_sigterm=False).first_rank, 3)
        self.assertEqual(client.first_rank, 0)

    def test_progress_is_accepted(self):
        job = control("/__test/job")
        client = self.client(job)
        answer = client.report(0, 12.5)
        self.assertEqual(answer["statEpoch"], 0)
        self.assertEqual(api_get(f"/v1/jobs/{job['id']}", job["token"])["workDoneSeconds"], 12.5)
        last = client.report(1)
        seen = api_get(f"/v1/jobs/{job['id']}", job["token"])
        self.assertEqual((seen["statEpoch"], seen["workDoneSeconds"]), (1, 0))
        # A report boa refuses (an epoch below the last, after a restart without a checkpoint) is
        # logged, not raised, and not retried: training goes on with the last allocation seen.
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.report(0), last)
            self.assertEqual(control("/__test/requests")[f"POST /v1/jobs/{job['id']}/progress"], 3)
            # Not an integer: sent as given (not truncated to epoch 1), refused, and logged at most
            # every warn_every_seconds (60 s here): no second line.
            self.assertEqual(client.report(1.5), last)
        self.assertEqual(len(logged.output), 1)
        self.assertRegex(logged.output[0], r"progress report not taken, training goes on: .*409")
        # boa unreachable (a restart outlasting the retries): the same.
        away = BoaJob(f"http://127.0.0.1:{free_port()}", job["id"], job["token"], retries=0,
                      handle_sigterm=False)
        self.clients.append(away)
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(away.report(2), {})
        self.assertIn("not reachable", logged.output[0])
        # A wrong token is the job refused: raised.
        wrong = BoaJob(client.url, job["id"], "not-the-token", handle_sigterm=False)
        self.clients.append(wrong)
        with self.assertRaises(BoaHTTPError) as raised:
            wrong.report(2)
        self.assertEqual(raised.exception.status, 401)
        # The job ended (cancelled here): not raised, but should_stop() says so, as a poll would.
        cancel = urllib.request.Request(URL + f"/v1/jobs/{job['id']}/cancel", data=b"", method="POST",
                                        headers={"Authorization": f"Bearer {job['token']}"})
        with urllib.request.urlopen(cancel, timeout=10):
            pass
        self.assertFalse(client.should_stop())
        answer = client.report(2)
        self.assertEqual((answer["state"], answer["width"]), ("cancelled", 0))
        self.assertTrue(client.should_stop())
        # In a poll's words (the report's answer, read once more), as a loop that polls would see it.
        self.assertEqual(client.stop_reason, "job cancelled")

    def test_a_nan_or_infinity_is_named_and_a_bad_work_figure_does_not_lose_the_epoch(self):
        # Found in a trial: json.dumps wrote NaN, boa answered "Malformed JSON" naming no field, and a
        # NaN work figure (a loss-derived one) lost the epoch reported with it.
        job = control("/__test/job")
        client = self.client(job, warn_every_seconds=0)
        client.report(0, 3.0)
        path = f"POST /v1/jobs/{job['id']}/progress"
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.report(1, float("nan"))["statEpoch"], 1)
            self.assertEqual(client.report(2, float("-inf"))["statEpoch"], 2)
            control("/__test/requests")  # reads and resets the counts
            last = client.report(float("nan"), 5)
            client.report(float("inf"))
            # Nothing sent.
            self.assertEqual(control("/__test/requests").get(path, 0), 0)
        self.assertEqual(last["statEpoch"], 2)
        seen = api_get(f"/v1/jobs/{job['id']}", job["token"])
        self.assertEqual((seen["statEpoch"], seen["workDoneSeconds"]), (2, 0))
        self.assertEqual(len(logged.output), 4)
        self.assertIn(
            "work_done_seconds must be a finite number, got nan: stat_epoch 1 reported without it",
            logged.output[0],
        )
        self.assertIn("work_done_seconds must be a finite number, got -inf", logged.output[1])
        self.assertIn(
            "progress report not taken, training goes on: stat_epoch must be a finite number, got nan: "
            "nothing sent",
            logged.output[2],
        )
        self.assertIn("stat_epoch must be a finite number, got inf", logged.output[3])
        # Found in review: boa refuses a report whose work is below 0 or above 1e9 whole (400), epoch and
        # all (time.time() across an NTP step back gives a negative figure).
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.report(3, -0.25)["statEpoch"], 3)
            self.assertEqual(client.report(4, 2e9)["statEpoch"], 4)
        self.assertIn("work_done_seconds must be a number from 0 to 1e+09, got -0.25", logged.output[0])
        self.assertIn("got 2000000000.0: stat_epoch 4 reported without it", logged.output[1])

    def test_moves_to_the_address_boa_url_file_names_when_boa_url_stops_answering(self):
        job = control("/__test/job")
        server, old, seen = forwarding(self)
        path = url_file(self, old)
        # from_env's env: boa's local executor gives BOA_URL and BOA_URL_FILE.
        env = {**executor_env(job), "BOA_URL": old, "BOA_URL_FILE": path}
        client = BoaJob.from_env(env, backoff_seconds=0.05, retries=2, handle_sigterm=False)
        self.clients.append(client)
        self.assertEqual(client.report(0, 1)["statEpoch"], 0)
        self.assertEqual(seen, [f"POST /v1/jobs/{job['id']}/progress"])
        # boa stops answering at the old address, and is restarted at another, which it writes to the file.
        server.shutdown()
        server.server_close()
        with open(path, "w") as file:
            file.write(URL + "/\n")
        control("/__test/requests")
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.report(1)["statEpoch"], 1)
        self.assertEqual(client.url, URL)
        self.assertEqual(control("/__test/requests"), {f"POST /v1/jobs/{job['id']}/progress": 1})
        self.assertEqual(api_get(f"/v1/jobs/{job['id']}", job["token"])["statEpoch"], 1)
        self.assertEqual(logged.output, [
            f"WARNING:boa_job:boa job {job['id']}: boa moved from {old} to {URL} (BOA_URL_FILE); reporting there"
        ])

    def test_no_move_for_a_boa_url_file_naming_no_valid_url_nor_for_a_url_given_to_the_constructor(self):
        job = control("/__test/job")
        away = f"http://127.0.0.1:{free_port()}"
        options = {"backoff_seconds": 0.01, "retries": 1, "handle_sigterm": False}
        env = {**executor_env(job), "BOA_URL": away, "BOA_URL_FILE": url_file(self, "127.0.0.1:8080")}
        bad = BoaJob.from_env(env, **options)
        given = BoaJob(away, job["id"], job["token"], env={"BOA_URL_FILE": url_file(self, URL)}, **options)
        self.clients += [bad, given]
        with mock.patch("boa_job._log") as log:
            for client in (bad, given):
                with self.assertRaises(BoaUnavailable):
                    client.allocation()
                self.assertEqual(client.url, away)
        log.warning.assert_not_called()

    def test_a_token_read_with_its_newline_works_and_one_no_header_carries_is_refused_unshown(self):
        # Found in review: http.client refused "Bearer <token>\n" with a ValueError naming the token,
        # out of report() and past an except BoaError (a token read from a file or a Secret).
        job = control("/__test/job")
        env = dict(executor_env(job), BOA_JOB_TOKEN=job["token"] + "\n")
        client = BoaJob.from_env(env, handle_sigterm=False)
        self.clients.append(client)
        self.assertEqual(client.report(1)["statEpoch"], 1)
        with self.assertRaises(BoaConfigError) as refused:
            BoaJob.from_env(dict(env, BOA_JOB_TOKEN=job["token"][:8] + " x"), handle_sigterm=False)
        self.assertNotIn(job["token"][:8], str(refused.exception))

    def test_close_gives_sigterm_back(self):
        # Found in review: after close() (a with block left for evaluation or an upload) the client's
        # handler stayed and swallowed boa's SIGTERM until the SIGKILL after the grace period.
        before = signal.getsignal(signal.SIGTERM)
        job = control("/__test/job")
        client = self.client(job)
        self.assertIsNot(signal.getsignal(signal.SIGTERM), before)
        client.close()
        self.assertIs(signal.getsignal(signal.SIGTERM), before)

    def test_sigterm_sets_should_stop(self):
        job = control("/__test/job")
        client = self.client(job)
        self.assertFalse(client.should_stop())
        os.kill(os.getpid(), signal.SIGTERM)
        self.assertTrue(wait_until(client.should_stop))
        self.assertEqual(client.stop_reason, "SIGTERM")
        # A SIGTERM is never cleared, not even by reading a running allocation again; and as with an
        # ended job, wait_for_width hands back no GPUs the job would at once stop on again (docs/client.md).
        with self.assertRaisesRegex(BoaError, r"stopped for good \(SIGTERM\)"):
            client.wait_for_width(1)
        self.assertEqual((client.should_stop(), client.stop_reason), (True, "SIGTERM"))

    def test_a_wait_for_width_timeout_that_is_no_number_is_named(self):
        client = self.client(control("/__test/job"))
        for timeout in ("10", -1, float("nan")):
            with self.subTest(timeout=timeout), self.assertRaisesRegex(
                BoaConfigError, r"timeout_seconds must be a number from 0, got"
            ):
                client.wait_for_width(timeout)

    def test_a_self_launched_job_reads_its_placement_from_the_allocation(self):
        # What the executor's environment would say, from the last allocation: nodes, this node's GPUs.
        allocation = {"width": 6, "nodes": [{"node": "a", "gpus": 4}, {"node": "b", "gpus": 2}]}
        for env, expected in (
            ({}, (6, 2, 4, 0)),
            ({"NODE_RANK": "1"}, (6, 2, 2, 4)),
            ({"NNODES": "1", "NPROC_PER_NODE": "6"}, (6, 1, 6, 0)),  # the environment wins
        ):
            client = BoaJob(URL, 1, "t", env=env, handle_sigterm=False)
            client._last_allocation = allocation
            self.assertEqual((client.world_size, client.nnodes, client.nproc_per_node, client.first_rank), expected)

    def test_a_forked_child_ends_on_sigterm_as_without_the_client(self):
        # A multiprocessing pool ends its workers with SIGTERM: the inherited handler must not keep them.
        marker = os.path.join(tempfile.mkdtemp(), "0.sigterm")
        os.environ["BOA_SIGTERM_FILE"] = marker
        try:
            self.client(control("/__test/job"))
            child = os.fork()
            if child == 0:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
                os._exit(0)
            _, status = os.waitpid(child, 0)
            self.assertTrue(os.WIFSIGNALED(status))
            self.assertEqual(os.WTERMSIG(status), signal.SIGTERM)
            self.assertFalse(os.path.exists(marker))
        finally:
            del os.environ["BOA_SIGTERM_FILE"]
            shutil.rmtree(os.path.dirname(marker), ignore_errors=True)

    def test_sigterm_is_marked_for_the_local_executor(self):
        # Under boa's local executor, the file tells it an exit 0 followed a SIGTERM (not the job's end).
        marker = os.path.join(tempfile.mkdtemp(), "0.sigterm")
        os.environ["BOA_SIGTERM_FILE"] = marker
        try:
            client = self.client(control("/__test/job"))
            self.assertFalse(os.path.exists(marker))
            self.assertFalse(client.should_stop())  # a program that looks (one that never does ends)
            os.kill(os.getpid(), signal.SIGTERM)
            self.assertTrue(wait_until(client.should_stop))
            with open(marker) as written:
                self.assertEqual(written.read(), str(os.getpid()))  # the supervisor checks it is the command's
        finally:
            del os.environ["BOA_SIGTERM_FILE"]
            shutil.rmtree(os.path.dirname(marker), ignore_errors=True)

    def test_sigterm_ends_a_wait_for_gpus(self):
        # The handler replaces SIGTERM's default: a self-launched job waiting for width 0 used to wait
        # on until its timeout, or its SIGKILL.
        job = control("/__test/job", {"running": False})
        client = BoaJob(URL, job["id"], job["token"], poll_seconds=5, env={})
        self.clients.append(client)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        with self.assertRaisesRegex(BoaError, "SIGTERM while waiting for GPUs"):
            client.wait_for_width(30)
        # Polling every 5 s, it ended at once: the signal cut the pause short.
        self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(client.stop_reason, "SIGTERM")
        # Once the signal came, a wait that finds no GPUs ends after its one poll.
        with self.assertRaisesRegex(BoaError, "SIGTERM while waiting for GPUs"):
            client.wait_for_width(30)

    def test_sigterm_ends_a_report_retrying_against_an_unreachable_boa(self):
        # The grace period after a SIGTERM is for the checkpoint: a report retried against an
        # unreachable boa used to hold the training loop for the retries' waits.
        url = f"http://127.0.0.1:{free_port()}"
        client = BoaJob(url, 3, "tok", 1, env={}, backoff_seconds=5, max_backoff_seconds=5)
        self.clients.append(client)
        self.assertFalse(client.should_stop())  # its loop looks (one that never does ends at SIGTERM)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        self.assertEqual(client.report(1), {})
        self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(client.stop_reason, "SIGTERM")

    def test_after_a_sigterm_a_request_to_a_silent_boa_gives_up_after_2_s_not_10(self):
        # A cancel check after the SIGTERM (as docs/client.md advises) against a boa that takes the
        # connection and never answers held the checkpoint up for timeout_seconds (10 s of torchrun's 30).
        silent = socket.socket()
        self.addCleanup(silent.close)
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # never accepted: connected, then no answer
        client = BoaJob(f"http://127.0.0.1:{silent.getsockname()[1]}", 3, "tok", 1, env={}, retries=0)
        self.clients.append(client)
        self.assertFalse(client.should_stop())  # its loop looks (one that never does ends at SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        self.assertTrue(wait_until(lambda: client.stop_reason == "SIGTERM"))
        started = time.monotonic()
        with self.assertRaisesRegex(BoaUnavailable, "timed out after 2 s$"):
            client.allocation()
        self.assertLess(time.monotonic() - started, 4)

    def test_a_new_generation_sets_should_stop(self):
        job = control("/__test/job")
        client = self.client(job).start_polling()
        time.sleep(0.3)  # several polls of the same generation
        self.assertFalse(client.should_stop())
        self.assertIsNone(client.poll_error)
        # Reaching the epoch where the plan's width changes makes boa rescale the job at its next ticks.
        client.report(job["rescaleEpoch"])
        self.assertFalse(client.should_stop())
        control("/__test/ticks", {"count": 3})
        self.assertTrue(wait_until(client.should_stop), "the poll did not see the new generation")
        self.assertIn("new generation", client.stop_reason)
        alloc = client.last_allocation
        self.assertGreater(alloc["generation"], job["generation"])
        self.assertEqual(alloc["width"], job["widths"][job["rescaleEpoch"]])

    def test_complete_marks_the_job_done(self):
        job = control("/__test/job")
        client = self.client(job)
        self.assertEqual(client.complete()["state"], "done")
        self.assertEqual(api_get(f"/v1/jobs/{job['id']}", job["token"])["state"], "done")
        self.assertTrue(client.should_stop())
        self.assertEqual(client.complete()["state"], "done")  # repeating it is harmless
        self.assertEqual(client.allocation()["width"], 0)

    def test_a_bad_token_is_an_error_not_a_retry_loop(self):
        job = control("/__test/job")
        client = self.client(dict(job, token="not-the-job-token-0123456789"), backoff_seconds=1)
        with self.assertRaises(BoaHTTPError) as raised:
            client.allocation()
        self.assertEqual((raised.exception.status, raised.exception.code), (401, "unauthorized"))
        self.assertEqual(control("/__test/requests"), {f"GET /v1/jobs/{job['id']}/allocation": 1})
        # Self-launched, the background poll gives up on it, says why, and asks no more.
        env = executor_env(dict(job, token="not-the-job-token-0123456789"))
        del env["BOA_GENERATION"]
        self_launched = BoaJob.from_env(env, poll_seconds=0.05, backoff_seconds=1)
        self.clients.append(self_launched)
        self_launched.start_polling()
        self.assertTrue(wait_until(self_launched.should_stop))
        self.assertIn("401", self_launched.stop_reason)
        time.sleep(0.2)
        self.assertEqual(control("/__test/requests"), {f"GET /v1/jobs/{job['id']}/allocation": 1})

    def test_a_self_launched_job_stopped_by_a_refused_poll_is_not_handed_gpus_again(self):
        # A stranger at BOA_URL for one poll (a restart, a reused port), boa again after it.
        gets = {"n": 0}
        running = {"jobId": 3, "state": "running", "width": 2, "nodes": [], "generation": 1, "statEpoch": 0}

        def answer():
            gets["n"] += 1
            if gets["n"] == 2:
                return 404, {"error": {"code": "not_found", "message": "no such job"}}
            return 200, running

        env = {"BOA_URL": answering(self, answer), "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "tok"}
        client = BoaJob.from_env(env, poll_seconds=0.05, backoff_seconds=1)
        self.clients.append(client)
        self.assertEqual(client.wait_for_width()["width"], 2)
        client.start_polling()
        self.assertTrue(wait_until(client.should_stop))
        self.assertIn("404", client.stop_reason)
        # Handed GPUs while should_stop() stays true, a job that resumes on them would stop again at
        # once, in a loop: the wait says the job stopped instead.
        with self.assertRaisesRegex(BoaError, "stopped for good"):
            client.wait_for_width()
        self.assertTrue(client.should_stop())

    def test_a_self_launched_jobs_launch_values_stay_those_of_its_generation_until_it_stops(self):
        paused = {"now": False}
        running = {
            "jobId": 3,
            "state": "running",
            "width": 2,
            "nodes": [{"node": "n1", "gpus": 2}],
            "generation": 1,
            "statEpoch": 0,
        }
        waiting = {"jobId": 3, "state": "waiting", "width": 0, "nodes": [], "generation": 2, "statEpoch": 0}
        url = answering(self, lambda: (200, waiting if paused["now"] else running))
        client = BoaJob.from_env({"BOA_URL": url, "BOA_JOB_ID": "3", "BOA_JOB_TOKEN": "tok"}, poll_seconds=0.05)
        self.clients.append(client)
        client.wait_for_width()
        client.start_polling()
        paused["now"] = True  # boa pauses the job: the next poll sees width 0 and generation 2
        self.assertTrue(wait_until(client.should_stop))
        # The generation still running (it checkpoints and stops next) was started on 2 GPUs.
        self.assertEqual(
            (client.generation, client.world_size, client.nnodes, client.nproc_per_node), (1, 2, 1, 2)
        )

    def test_under_the_executor_a_refused_poll_is_an_error_not_a_stop(self):
        # Rank 0 exiting 0 would mark the job done; boa stops the replicas it no longer wants itself.
        job = control("/__test/job")
        client = self.client(dict(job, token="not-the-job-token-0123456789"), backoff_seconds=1)
        control("/__test/requests")
        client.start_polling()
        # The poll goes on after the refusals, and nothing tells the job to stop.
        polls = 0

        def polled_thrice():
            nonlocal polls
            polls += control("/__test/requests").get(f"GET /v1/jobs/{job['id']}/allocation", 0)
            return polls >= 3

        self.assertTrue(wait_until(polled_thrice))
        self.assertEqual(client.poll_error.status, 401)
        self.assertFalse(client.should_stop())
        self.assertIsNone(client.stop_reason)

    def test_5xx_and_429_are_retried_with_bounded_attempts(self):
        job = control("/__test/job")
        key = f"GET /v1/jobs/{job['id']}/allocation"
        control("/__test/fail-next", {"count": 2, "status": 503})
        self.assertEqual(self.client(job).allocation()["width"], job["width"])
        self.assertEqual(control("/__test/requests"), {key: 3})
        control("/__test/fail-next", {"count": 10, "status": 500})
        with self.assertRaises(BoaHTTPError) as raised:
            self.client(job, retries=2).allocation()
        self.assertEqual(raised.exception.status, 500)
        self.assertEqual(control("/__test/requests"), {key: 3})
        # 429 asks to wait: retried after Retry-After (1 s), not the 0.05 s backoff.
        control("/__test/fail-next", {"count": 1, "status": 429, "retryAfter": 1})
        started = time.monotonic()
        self.assertEqual(self.client(job).allocation()["width"], job["width"])
        self.assertGreaterEqual(time.monotonic() - started, 0.95)
        self.assertEqual(control("/__test/requests"), {key: 2})

    def test_an_unreachable_service_fails_after_the_retries(self):
        url = f"http://127.0.0.1:{free_port()}"
        client = BoaJob(url, 1, "t", retries=3, backoff_seconds=0.05, handle_sigterm=False)
        started = time.monotonic()
        with self.assertRaisesRegex(BoaUnavailable, "not reachable after 4 attempts: ECONNREFUSED$") as raised:
            client.allocation()
        self.assertEqual(raised.exception.reason, "ECONNREFUSED")
        # Waits of 0.05, 0.1, 0.2 s at most (with jitter): bounded, no endless loop.
        self.assertLess(time.monotonic() - started, 5)

    def test_a_stranger_answering_200_is_a_boa_error_and_the_poll_goes_on(self):
        for body in (b"<html>not boa</html>", b'{"status": "ok", "not": "boa"}'):
            with self.subTest(body=body):
                self.a_stranger_answering_200_is_a_boa_error(body)

    def a_stranger_answering_200_is_a_boa_error(self, page):
        # Not boa at BOA_URL (a proxy's page, a reused port): a ValueError used to end the poll thread;
        # a JSON object that is no allocation read as "new generation None", and the replica, stopping
        # with exit 0, was taken for the job done (found in review).
        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = page
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        server = serve(self, Page)
        client = BoaJob(f"http://127.0.0.1:{server.server_port}", 1, "t", 1, poll_seconds=0.05, handle_sigterm=False)
        self.clients.append(client)
        with self.assertRaisesRegex(BoaError, "unexpected answer .*not.*boa"):
            client.allocation()
        client.start_polling()
        self.assertTrue(wait_until(lambda: client.poll_error is not None))
        time.sleep(0.2)
        self.assertTrue(client._poller.is_alive())
        self.assertFalse(client.should_stop())
        # A report answered so is not taken and training goes on (only 401, 403 and 404 raise).
        self.assertEqual(client.report(1), {})

    def test_wait_for_width_waits_out_an_outage_of_boa(self):
        # boa restarting answers 5xx, then nothing, for longer than the retries of one poll: the wait
        # goes on, as it does through a width of 0, and ends only with the job or the timeout.
        job = control("/__test/job")
        control("/__test/fail-next", {"count": 7, "status": 503})
        options = dict(poll_seconds=0.05, retries=1, backoff_seconds=0.05, handle_sigterm=False, env={})
        client = BoaJob(URL, job["id"], job["token"], **options)
        self.clients.append(client)
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.wait_for_width(30)["width"], job["width"])
            # Four polls of two attempts: seven 503s, then the allocation.
            self.assertEqual(control("/__test/requests"), {f"GET /v1/jobs/{job['id']}/allocation": 8})
            port = free_port()
            back = {"jobId": 1, "state": "running", "width": 2, "nodes": [], "generation": 3, "statEpoch": 0}
            threading.Timer(1.0, stranger, (self, 200, back, port)).start()
            client = BoaJob(f"http://127.0.0.1:{port}", 1, "t", **options)
            self.clients.append(client)
            self.assertEqual(client.wait_for_width(30), back)
        # Each outage said once (the 5xx, then the port nothing listened on for a second).
        self.assertEqual(len(logged.output), 2, logged.output)
        self.assertIn("answered 503 injected", logged.output[0])
        self.assertIn("is not reachable (ECONNREFUSED)", logged.output[1])

    def test_wait_for_width_says_so_while_boa_stays_unreachable_or_failing(self):
        # A wrong BOA_URL (a port nothing listens on) fails like a boa restarting, which is waited out:
        # the wait used to look like one for GPUs, for ever. Said at once, then every warn_every_seconds.
        url = f"http://127.0.0.1:{free_port()}"
        options = dict(poll_seconds=0.02, retries=0, handle_sigterm=False, env={})
        client = BoaJob(url, 12, "t", warn_every_seconds=0.3, **options)
        self.clients.append(client)
        started = time.monotonic()
        with self.assertLogs("boa_job", "WARNING") as logged, self.assertRaisesRegex(BoaError, "no GPUs within 1 s"):
            client.wait_for_width(1)
        seconds = time.monotonic() - started
        said = [record.getMessage() for record in logged.records]
        self.assertEqual(
            said[0],
            f"boa job 12: boa at {url} is not reachable (ECONNREFUSED); retrying while waiting for GPUs "
            "(is BOA_URL right?)",
        )
        # Dozens of polls, a few lines: one at once, then one per 0.3 s at most.
        self.assertGreaterEqual(len(said), 2)
        self.assertLessEqual(len(said), int(seconds / 0.3) + 1)
        # By default once a minute: one line for this whole wait.
        client = BoaJob(url, 12, "t", **options)
        self.clients.append(client)
        with self.assertLogs("boa_job", "WARNING") as logged, self.assertRaises(BoaError):
            client.wait_for_width(0.5)
        self.assertEqual(len(logged.records), 1)
        # boa there but failing (5xx) is said too, in its own words.
        job = control("/__test/job")
        control("/__test/fail-next", {"count": 3, "status": 503})
        client = BoaJob(URL, job["id"], job["token"], **options)
        self.clients.append(client)
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertEqual(client.wait_for_width(10)["width"], job["width"])
        self.assertEqual(
            [record.getMessage() for record in logged.records],
            [f"boa job {job['id']}: boa at {URL} answered 503 injected: injected by the test; retrying while "
             "waiting for GPUs"],
        )

    def test_wait_for_width_still_ends_at_a_refusal_or_the_timeout(self):
        job = control("/__test/job", {"running": False})
        options = dict(poll_seconds=0.05, retries=0, handle_sigterm=False, env={})
        client = BoaJob(URL, job["id"], "not-the-job-token-0123456789", **options)
        self.clients.append(client)
        with self.assertRaises(BoaHTTPError) as raised:
            client.wait_for_width(30)
        self.assertEqual(raised.exception.status, 401)
        self.assertEqual(control("/__test/requests"), {f"GET /v1/jobs/{job['id']}/allocation": 1})
        client = BoaJob(f"http://127.0.0.1:{free_port()}", 1, "t", **options)
        self.clients.append(client)
        with self.assertLogs("boa_job", "WARNING"), self.assertRaisesRegex(
            BoaError, r"no GPUs within 0.5 s \(last poll: boa at .* not reachable"
        ):
            client.wait_for_width(0.5)

    def test_a_redirect_takes_the_token_only_to_the_same_host(self):
        seen = {}

        class Target(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen[self.headers.get("Host")] = self.headers.get("Authorization")
                data = b'{"jobId":1,"state":"running","width":1,"nodes":[],"generation":1,"statEpoch":0}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        # 127.0.0.2 is another host to urllib (loopback, so no network is needed).
        elsewhere = serve(self, Target, "127.0.0.2").server_port

        class Redirecting(Target):
            def do_GET(self):
                if self.path.startswith("/v1/"):
                    return Target.do_GET(self)
                # /away/v1/... to the other host, /same/v1/... to this one's /v1/...
                to = f"http://127.0.0.2:{elsewhere}" if self.path.startswith("/away") else ""
                self.send_response(302)
                self.send_header("Location", to + self.path[self.path.index("/v1/"):])
                self.send_header("Content-Length", "0")
                self.end_headers()

        here = serve(self, Redirecting).server_port
        for prefix in ("/away", "/same"):
            client = BoaJob(f"http://127.0.0.1:{here}{prefix}", 1, "JOB-TOKEN", handle_sigterm=False)
            self.clients.append(client)
            self.assertEqual(client.allocation()["width"], 1)
        self.assertEqual(seen, {f"127.0.0.2:{elsewhere}": None, f"127.0.0.1:{here}": "Bearer JOB-TOKEN"})

    def test_a_redirected_post_is_sent_again_on_307_or_308_and_refused_by_name_otherwise(self):
        # urllib refused a 307/308 POST (every report dropped) and turned a 301/302 POST into a GET,
        # whose 404 ("no route GET") report() raised as the job refused, crashing the training loop.
        seen = []

        class Redirecting(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                seen.append((self.command, self.path, body, self.headers.get("Authorization")))
                # /r307/v1/... answers 307 to /v1/... here; /away/v1/... 307 to another host
                code, _, rest = self.path[2:].partition("/")
                if self.path.startswith("/r"):
                    self.send_response(int(code))
                    self.send_header("Location", "/" + rest)
                    self.send_header("Content-Length", "0")
                    return self.end_headers()
                if self.path.startswith("/away"):
                    self.send_response(307)
                    self.send_header("Location", f"http://127.0.0.2:{free_port()}/{rest}")
                    self.send_header("Content-Length", "0")
                    return self.end_headers()
                if self.command == "GET" and not self.path.endswith("/allocation"):
                    return reply(self, 404, b'{"error":{"code":"not_found","message":"no route"}}')
                reply(self, 200, b'{"jobId":1,"state":"running","width":2,"nodes":[],"generation":1,"statEpoch":3}')

            do_POST = do_GET

            def log_message(self, *args):
                pass

        here = f"http://127.0.0.1:{serve(self, Redirecting).server_port}"
        for code in (307, 308):
            seen.clear()
            client = BoaJob(f"{here}/r{code}", 1, "JOB-TOKEN", 1, handle_sigterm=False, retries=0)
            self.assertEqual(client.report(3, 1.5)["statEpoch"], 3)
            self.assertEqual(client.complete()["state"], "running")
            # Sent again, it is the same report: numbered the same.
            sequence = seen[0][2].get("sequence", {})
            self.assertRegex(sequence.get("sender", ""), r"^[0-9a-f]{16}$")
            body = {"statEpoch": 3, "workDoneSeconds": 1.5, "generation": 1,
                    "sequence": {"sender": sequence["sender"], "number": 1}}
            self.assertEqual(seen[:2], [("POST", f"/r{code}/v1/jobs/1/progress", body, "Bearer JOB-TOKEN"),
                                        ("POST", "/v1/jobs/1/progress", body, "Bearer JOB-TOKEN")])
            self.assertEqual(seen[3][:2], ("POST", "/v1/jobs/1/complete"))
        for code in (301, 302, 303):
            seen.clear()
            client = BoaJob(f"{here}/r{code}", 1, "JOB-TOKEN", 1, handle_sigterm=False, retries=0)
            # A report is said and training goes on (no "job refused"); complete() raises it.
            with self.assertLogs("boa_job", "WARNING") as logged:
                self.assertEqual(client.report(3), {})
            self.assertIn(f"boa answered {code} redirect_not_followed: POST {here}/r{code}/v1/jobs/1/progress "
                          f"was redirected to {here}/v1/jobs/1/progress; not followed: a {code} turns the POST "
                          "into a GET", logged.output[0])
            with self.assertRaises(BoaHTTPError) as raised:
                client.complete()
            self.assertEqual((raised.exception.status, raised.exception.code), (code, "redirect_not_followed"))
            self.assertEqual([request[:2] for request in seen], [("POST", f"/r{code}/v1/jobs/1/progress"),
                                                                 ("POST", f"/r{code}/v1/jobs/1/complete")])
        # A 307 to another host is not followed: the token goes to BOA_URL's host only.
        client = BoaJob(f"{here}/away", 1, "JOB-TOKEN", 1, handle_sigterm=False, retries=0)
        with self.assertRaisesRegex(BoaHTTPError, r"307 redirect_not_followed: .*to http://127\.0\.0\.2:.*another host"):
            client.complete()

    def test_an_error_whose_error_is_a_string_is_a_boa_http_error(self):
        # Not boa's {"error": {"code", ...}} but a proxy's or another framework's {"error": "Not Found"}:
        # an AttributeError used to escape, which trainers catching BoaError do not expect.
        client = BoaJob(stranger(self, 404, {"statusCode": 404, "error": "Not Found"}), 1, "t", 1,
                        handle_sigterm=False)
        with self.assertRaises(BoaHTTPError) as raised:
            client.report(2, 1.0)
        self.assertEqual((raised.exception.status, raised.exception.code), (404, "http_error"))
        self.assertEqual(raised.exception.message, "Not Found")
        client = BoaJob(stranger(self, 502, {"error": "boa is restarting"}), 1, "t", 1, retries=1,
                        backoff_seconds=0.01, handle_sigterm=False)
        with self.assertRaisesRegex(BoaHTTPError, "502 http_error: boa is restarting"):
            client.allocation()

    def test_the_poll_goes_on_through_any_error_and_logs_an_unexpected_one(self):
        # A dead poll thread would leave should_stop() blind to rescales, and a self-launched job's
        # lease would lapse.
        url = stranger(self, 502, {"error": "boa is restarting"})
        client = BoaJob(url, 1, "t", 1, retries=0, poll_seconds=0.05, handle_sigterm=False)
        self.clients.append(client)
        client.start_polling()
        self.assertTrue(wait_until(lambda: isinstance(client.poll_error, BoaHTTPError)))
        self.assertEqual(client.poll_error.message, "boa is restarting")
        # Anything but a BoaError is a bug of the client's: logged (with its traceback), then polled on.
        client.allocation = mock.Mock(side_effect=RuntimeError("a bug"))
        with self.assertLogs("boa_job", "WARNING") as logged:
            self.assertTrue(wait_until(lambda: logged.output))
        self.assertIn("RuntimeError: a bug", "\n".join(logged.output))
        del client.allocation
        self.assertTrue(wait_until(lambda: isinstance(client.poll_error, BoaHTTPError)))
        self.assertTrue(client._poller.is_alive())
        self.assertFalse(client.should_stop())

    def test_a_self_launched_job_waits_for_gpus_and_follows_rescales(self):
        job = control("/__test/job", {"running": False})
        client = BoaJob(URL, job["id"], job["token"], poll_seconds=0.05, handle_sigterm=False)
        self.clients.append(client)
        self.assertIsNone(client.generation)
        with self.assertRaisesRegex(BoaError, "got no GPUs within 0.2 s"):
            client.wait_for_width(0.2)
        got = {}
        waiter = threading.Thread(target=lambda: got.update(client.wait_for_width(10)))
        waiter.start()
        control("/__test/ticks", {"count": 3})
        waiter.join(10)
        self.assertGreater(got.get("width", 0), 0)
        self.assertEqual(client.generation, got["generation"])
        self.assertEqual(client.world_size, got["width"])  # no WORLD_SIZE: the allocation's width
        client.start_polling()
        client.report(job["rescaleEpoch"])
        control("/__test/ticks", {"count": 3})
        self.assertTrue(wait_until(client.should_stop))
        # After its checkpoint, the job adopts the new generation and trains on.
        again = client.wait_for_width(5)
        self.assertFalse(client.should_stop())
        self.assertEqual(client.generation, again["generation"])
        self.assertGreater(again["generation"], got["generation"])


if __name__ == "__main__":
    unittest.main()

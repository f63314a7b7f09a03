"""The job side of boa: read the allocation, report progress, finish, and know when to stop.

Standard library only, so any training image can copy this one file. A replica launched by boa's
executor finds everything in its environment (BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN, BOA_GENERATION,
WORLD_SIZE, ...); a self-launched job passes url, job id and token and waits for a non-zero width.

    job = BoaJob.from_env()
    job.start_polling()
    while not done:
        train_a_bit()
        if job.should_stop():      # SIGTERM, or boa gave the job a new generation (rescale)
            save_checkpoint()
            sys.exit(0)            # boa's executor starts the next one (self-launched: docs/client.md)
        job.report(stat_epoch, work_done_seconds)
    job.complete()

See docs/client.md for the protocol.
"""

import errno
import http.client
import json
import logging
import math
import numbers
import os
import random
import re
import secrets
import signal
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["BoaJob", "BoaError", "BoaConfigError", "BoaHTTPError", "BoaUnavailable", "FINISHED_STATES"]

_log = logging.getLogger("boa_job")

# Job states after which the job has no allocation any more.
FINISHED_STATES = ("done", "cancelled", "failed", "lost")


class BoaError(Exception):
    """Anything the client cannot do."""


class BoaConfigError(BoaError):
    """The environment (or the arguments) do not say which job this is or where boa is."""


class BoaHTTPError(BoaError):
    """boa refused the request (4xx), or still failed after the retries (5xx)."""

    def __init__(self, status, code, message, field=None):
        super().__init__(f"boa answered {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class BoaUnavailable(BoaError):
    """boa could not be reached after the retries; reason says why (ECONNREFUSED, timed out after 10 s)."""

    def __init__(self, message, reason=None):
        super().__init__(message)
        self.reason = reason


class _NotBoaAnswer(BoaError):
    """A 200 that is not boa's answer (a captive portal's page, another service at BOA_URL). Inside the
    client only: callers see a BoaError, as before."""


class _Superseded(BoaError):
    """A report's attempt not made: a newer report of the same or a later epoch was made meanwhile."""


# The most work a report may say (boa's BOUNDS.workSeconds): above it boa refuses the whole report.
_MAX_WORK_SECONDS = 1e9


def _non_finite(value):
    """A NaN or an infinity (float, numpy's), which JSON cannot carry."""
    real = isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
    return real and not math.isfinite(value)


# The highest statEpoch boa takes for any class (boa's BOUNDS.statEpoch).
_MAX_STAT_EPOCH = 1000


def _checked_epoch(stat_epoch, stat_epochs):
    """The stat_epoch as sent (an int), and why boa would refuse it, or None: a NaN or infinity (which
    JSON cannot carry), or not an integer from 0 to the class's last statistical epoch (boa's
    BOUNDS.statEpoch while the client has not seen the class's). The same rules as the Node client's."""
    if _non_finite(stat_epoch):
        return stat_epoch, f"stat_epoch must be a finite number, got {stat_epoch!r}"
    known = isinstance(stat_epochs, int) and not isinstance(stat_epochs, bool) and stat_epochs >= 1
    most = stat_epochs - 1 if known else _MAX_STAT_EPOCH
    # numpy's integers, and a float with no fraction (3.0, which JSON and boa read as 3), become int.
    if isinstance(stat_epoch, numbers.Integral) and not isinstance(stat_epoch, bool):
        value = int(stat_epoch)
    # Not a bool (an Integral, so a Real too): True went as epoch 1 (found in a newcomer review).
    elif (isinstance(stat_epoch, numbers.Real) and not isinstance(stat_epoch, bool)
          and float(stat_epoch).is_integer()):
        value = int(stat_epoch)
    else:
        value = None
    if value is None or not 0 <= value <= most:
        return stat_epoch, f"stat_epoch must be an integer from 0 to {most}, got {stat_epoch!r}"
    return value, None


def _checked_work(work_done_seconds):
    """The work figure as sent (a float), and why boa would refuse it, or None: not a number (a string,
    as the Node client), NaN, infinite, below 0 or above 1e9."""
    try:
        if isinstance(work_done_seconds, (str, bytes, bool)):
            raise TypeError
        work = float(work_done_seconds)
    except (TypeError, ValueError, OverflowError):
        # float() raised out of report(), and training stopped, on a figure it could not read.
        shown = work_done_seconds
        return None, f"work_done_seconds must be a number from 0 to {_MAX_WORK_SECONDS:g}, got {shown!r}"
    if 0 <= work <= _MAX_WORK_SECONDS:
        return work, None
    need = "a finite number" if not math.isfinite(work) else f"a number from 0 to {_MAX_WORK_SECONDS:g}"
    return None, f"work_done_seconds must be {need}, got {work!r}"


def _checked_id(name, value, least=1, optional=False):
    """A job id (from 1) or generation (from 0) as an int: an int, or a string of digits. Anything else
    requested another job's routes (int(1.5) is 1) or raised a ValueError naming nothing. The same
    rules as the Node client's."""
    if value is None and optional:
        return None
    number = value
    if isinstance(value, str) and re.fullmatch(r"[0-9]+", value.strip()):
        number = int(value)
    if isinstance(number, numbers.Integral) and not isinstance(number, bool) and number >= least:
        return int(number)
    raise BoaConfigError(f"{name} must be a whole number from {least}, got {value!r}")


def _checked_option(name, value, positive=False):
    """A number of seconds: above 0 for a poll or a timeout (0 polled boa in a busy loop, failed every
    request), else from 0."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and (value > 0 if positive else value >= 0):
        return float(value)
    raise BoaConfigError(f"{name} must be {'a number above 0' if positive else 'a number from 0'}, got {value!r}")


def _checked_retries(value):
    # A negative count was never reached: retried for ever.
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0:
        return int(value)
    raise BoaConfigError(f"retries must be a whole number from 0, got {value!r}")


def _mark_sigterm(path):
    """Under boa's local executor: tells it a SIGTERM reached the job, so an exit 0 after one boa did
    not send (`pkill python`) is a stop from outside, not the job's end."""
    if not path:
        return
    try:
        # Its pid: the supervisor counts the command's own process only, not a child with a client too.
        with open(path, "w") as marker:
            marker.write(str(os.getpid()))
    except OSError:
        pass  # its folder gone: the exit then reads as the job's end, as without the file


def _env_int(env, name, default=None):
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    # ASCII digits only, as the Node client reads them: int() also takes " 4", "4_000", "+4" and other
    # scripts' digits, so one job's two clients read one environment differently.
    if not re.fullmatch(r"-?[0-9]+", raw):
        raise BoaConfigError(f"{name} must be an integer, got {raw!r}")
    return int(raw)


def _check_url(name, url):
    """Refuses what cannot be boa's address: every request to it would fail like a boa restarting, and
    be retried for ever, with nothing said."""
    text = str(url)
    problem = _url_problem(text)
    if problem:
        raise BoaConfigError(
            f"{name} must be an absolute http:// or https:// URL such as http://127.0.0.1:8080, got {text!r}: "
            f"{problem}"
        )


def _url_problem(text):
    """What is wrong with a URL for boa, or None; the same rules as the Node client's."""
    if re.search(r"\s", text):
        return "it contains whitespace"
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if not scheme:
        if not text.lower().startswith(("http:", "https:")):
            return f"it has no scheme (did you mean 'http://{text.lstrip('/')}'?)"
        return "http: or https: must be followed by //"
    if scheme.group(1).lower() not in ("http", "https"):
        return f"its scheme is {scheme.group(1)}://"
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:  # http://[::1
        return "it is not a valid URL"
    if "@" in parts.netloc:
        return "it has a user or password (the client sends the job's token)"
    if not parts.hostname:
        return "it has no host"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "its port is not a number from 1 to 65535"
    if re.search("[?#]", text):
        return "it has a query or fragment (the client appends /v1/jobs/... to it)"
    return None


class BoaJob:
    """One job's connection to boa. Thread-safe; one per process."""

    def __init__(
        self,
        url,
        job_id,
        token,
        generation=None,
        *,
        env=None,
        poll_seconds=10.0,
        timeout_seconds=10.0,
        sigterm_timeout_seconds=2.0,
        retries=5,
        backoff_seconds=0.5,
        max_backoff_seconds=8.0,
        handle_sigterm=True,
        warn_every_seconds=60.0,
    ):
        for name, value in (("url", url), ("job_id", job_id), ("token", token)):
            if value is None or value == "":
                raise BoaConfigError(f"{name} is required")
        _check_url("url", url)
        self.url = str(url).rstrip("/")
        self.job_id = _checked_id("job_id", job_id)
        # boa's tokens are base64url: surrounding whitespace (a token read from a file or a Secret with its
        # newline; http.client refused it with a ValueError naming the token) is dropped, and anything else
        # that cannot go in a header is refused here, never echoed.
        self.token = str(token).strip()
        if not re.fullmatch(r"[\x21-\x7e]+", self.token):
            raise BoaConfigError("the job token (BOA_JOB_TOKEN) must be one word of printable ASCII (not shown)")
        # None until a self-launched job learns it from its first non-zero allocation.
        self.generation = None if generation is None else _checked_id("generation", generation, 0)
        # BOA_GENERATION is set only by boa's executor, which stops the replicas it no longer wants itself.
        self._run_by_executor = self.generation is not None
        self.env = dict(os.environ if env is None else env)
        self.poll_seconds = _checked_option("poll_seconds", poll_seconds, positive=True)
        self.timeout_seconds = _checked_option("timeout_seconds", timeout_seconds, positive=True)
        self.sigterm_timeout_seconds = _checked_option("sigterm_timeout_seconds", sigterm_timeout_seconds,
                                                       positive=True)
        self.retries = _checked_retries(retries)
        self.backoff_seconds = _checked_option("backoff_seconds", backoff_seconds)
        self.max_backoff_seconds = _checked_option("max_backoff_seconds", max_backoff_seconds)
        self.warn_every_seconds = _checked_option("warn_every_seconds", warn_every_seconds)
        # When wait_for_width last warned that boa is unreachable or failing; None: not since it answered.
        self._warned_at = None
        # When report() last warned that a report was not taken.
        self._report_warned_at = None
        # The body of the newest report boa did not take because it was unreachable or failing (a
        # restart): the background poll sends it again until boa takes it or a newer report replaces it.
        self._unsent_report = None
        # The reports (bodies) made and not yet superseded by a newer one of the same or a later epoch:
        # only these are sent, or sent again. A retry or a resend of an older one landed after the newer
        # report and put boa's workDoneSeconds back until the next report (found in review).
        self._live_reports = []
        # Held for each attempt of a report: they go to boa one at a time, in the order they were made. A
        # resend held up on its way (a slow proxy) otherwise reached boa after the newer report.
        self._report_line = threading.Lock()
        # Each report's place among this client's, sent as its `sequence`: boa takes nothing from one
        # numbered no higher than a report it already took from this sender. An attempt given up on (timed
        # out) may still be forwarded by a proxy after the newer report, and its lower workDoneSeconds was
        # taken. Another sender for each client made: each replica, each process (a restart counts from 1).
        self._report_sender = secrets.token_hex(8)
        self._report_number = 0
        # False once boa refused `sequence` as a field it does not know (a boa from before it).
        self._send_sequence = True
        self._lock = threading.Lock()
        # Set by the SIGTERM handler without the lock: a handler runs in the main thread, which may hold it.
        self._sigterm = False
        # Whether the program has asked whether to stop (should_stop, stop_reason, wait_for_width). Until
        # it has, a SIGTERM keeps its default (the process ends): a program that only reports never
        # looks, and the handler swallowed boa's SIGTERM until the SIGKILL at the end of the grace period
        # (120 s a rescale or cancel, with nothing said; found in a newcomer review).
        self._heeded = False
        self._stop_reason = None
        self._stop_kind = None
        self._last_allocation = None
        # The allocation the running generation was started on (wait_for_width adopts it).
        self._adopted_allocation = None
        self._poll_error = None
        # BOA_URL_FILE (from_env only): where boa's local executor writes its address when it moves.
        self._url_file = None
        self._stopped = threading.Event()
        self._poller = None
        # The handler installed, and the one before it, which close() puts back (as the Node client does).
        self._sigterm_handler = self._previous_sigterm = None
        if handle_sigterm:
            self._install_sigterm()

    @classmethod
    def from_env(cls, env=None, **options):
        """Builds the client from BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN (and BOA_GENERATION if set).

        With BOA_URL_FILE set (boa's local executor sets it), the file is re-read whenever boa stops
        answering (refused, reset, DNS, timeout), and a valid URL there other than the current one is
        reported to from then on, with one warning: a boa restarted at another address is followed.
        """
        env = os.environ if env is None else env
        missing = [n for n in ("BOA_URL", "BOA_JOB_ID", "BOA_JOB_TOKEN") if not env.get(n)]
        if missing:
            raise BoaConfigError(
                f"missing environment variable {', '.join(missing)}: boa's executor sets BOA_URL, "
                "BOA_JOB_ID and BOA_JOB_TOKEN; a self-launched job sets them to the URL of the service "
                "and the id and token `boa jobs submit` printed"
            )
        _check_url("BOA_URL", env["BOA_URL"])
        job = cls(
            env["BOA_URL"],
            _checked_id("BOA_JOB_ID", _env_int(env, "BOA_JOB_ID")),
            env["BOA_JOB_TOKEN"],
            _checked_id("BOA_GENERATION", _env_int(env, "BOA_GENERATION"), 0, optional=True),
            env=env,
            **options,
        )
        # Only here: a url given to the constructor is the caller's word, which no file overrides.
        job._url_file = env.get("BOA_URL_FILE") or None
        return job

    # ---- the launch environment (torchrun's names) ----

    def _launch_allocation(self):
        """The allocation the running generation started on (wait_for_width adopted it), else the last
        seen: the newest poll may already hold the next generation's width (0 for a pause) while this
        one still runs until it stops."""
        return self._adopted_allocation or self._last_allocation or {}

    @property
    def world_size(self):
        """GPUs of the whole job: WORLD_SIZE, else the width of the allocation this generation runs on."""
        size = _env_int(self.env, "WORLD_SIZE")
        if size is not None:
            return size
        return self._launch_allocation().get("width", 0)

    @property
    def nnodes(self):
        """Nodes of the placement: NNODES, else the last allocation's (a self-launched job), else 1."""
        return _env_int(self.env, "NNODES", len(self._allocation_nodes()) or 1)

    @property
    def node_rank(self):
        return _env_int(self.env, "NODE_RANK", 0)

    @property
    def nproc_per_node(self):
        """GPUs on this node: NPROC_PER_NODE, else this node's in the last allocation, else the world size."""
        nodes = self._allocation_nodes()
        rank = self.node_rank
        fallback = nodes[rank].get("gpus", self.world_size) if rank < len(nodes) else self.world_size
        return _env_int(self.env, "NPROC_PER_NODE", fallback)

    @property
    def first_rank(self):
        """Global rank of this node's first worker: BOA_FIRST_RANK (nodes can hold different GPU counts)."""
        nodes = self._allocation_nodes()
        if nodes:
            fallback = sum(node.get("gpus", 0) for node in nodes[: self.node_rank])
        else:
            fallback = self.node_rank * self.nproc_per_node
        return _env_int(self.env, "BOA_FIRST_RANK", fallback)

    def _allocation_nodes(self):
        return list(self._launch_allocation().get("nodes") or [])

    @property
    def master_addr(self):
        # Empty is unset, as the Node client reads it: "" names no host to rendezvous at.
        return self.env.get("MASTER_ADDR") or "127.0.0.1"

    @property
    def master_port(self):
        return _env_int(self.env, "MASTER_PORT", 29500)

    @property
    def checkpoint_dir(self):
        """BOA_CHECKPOINT_DIR, or None when the job has no checkpoint location.

        The local executor sets it for every process it starts (--checkpoint, else the job's own
        --env value, else a folder of the job's own); on Kubernetes only --checkpoint or
        --checkpoint-claim (or --env) does; a self-launched job (boa starts no process) gets none."""
        return self.env.get("BOA_CHECKPOINT_DIR") or None

    # ---- the API ----

    def allocation(self):
        """The job's allocation now: {jobId, state, width, nodes, generation, statEpoch, statEpochs}."""
        return self._observe(self._request("GET", f"/v1/jobs/{self.job_id}/allocation"))

    def stat_epochs(self):
        """The statistical epochs of the job's class (a report takes stat_epoch 0 to this less 1), from the
        last allocation seen, else asked; None when boa does not say (one older than the field). Raises as
        allocation() does."""
        n = (self.last_allocation or self.allocation() or {}).get("statEpochs")
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else None

    def report(self, stat_epoch, work_done_seconds=None):
        """Reports the statistical epoch reached (and 1-GPU seconds of work done in it); returns the allocation.

        A report boa does not take never stops training: boa unreachable or failing (restarting), or
        refusing the report itself (an epoch outside the class's range, one below an earlier report
        after a restart without a checkpoint, a non-integer) is logged on the boa_job logger (at
        once, then at most every warn_every_seconds) and the last allocation seen is returned. Raises
        BoaHTTPError only when boa refuses the job (401, 403, 404: a wrong token or job id). One not
        taken because boa was unreachable or failing is kept, and the background poll (start_polling)
        sends it again until boa takes it or a newer report replaces it.

        A stat_epoch boa would refuse (NaN, infinite, not an integer, below 0, above the class's last
        statistical epoch) is not sent (logged the same way); a work_done_seconds boa would refuse (NaN,
        infinite, below 0, above 1e9, not a number; easily a loss-derived figure) is left out, logged, and
        the epoch reported."""
        # JSON has no NaN: json.dumps wrote the token NaN, boa answered "Malformed JSON" naming no field,
        # and a bad work figure lost the epoch with it (found in a trial). Refused here, as the Node client.
        # Not sent, so not kept either: sent during an outage, an epoch boa refuses replaced the report
        # kept to send again (5.5 or stat_epochs itself "covers" 5), and the epoch kept was lost
        # (failure-mode review).
        with self._lock:
            known = (self._last_allocation or {}).get("statEpochs")
        stat_epoch, problem = _checked_epoch(stat_epoch, known)
        if problem:
            self._warn_report(f"{problem}: nothing sent")
            with self._lock:
                return dict(self._last_allocation or {})
        body = {"statEpoch": stat_epoch}
        if work_done_seconds is not None:
            work, problem = _checked_work(work_done_seconds)
            if problem is None:
                body["workDoneSeconds"] = work
            else:
                # The epoch is what widens or narrows the job; work is optional, so it goes without.
                self._warn_report(f"{problem}: stat_epoch {stat_epoch!r} reported without it", taken=True)
        # The generation this replica runs: a report landing after a rescale or restart (a retry, say)
        # then changes nothing (a job boa runs) or does not time the epoch it starts (self-launched).
        if self.generation is not None:
            body["generation"] = self.generation
        # Made here, not per attempt: a retry or a resend is the same report, numbered the same.
        with self._lock:
            if self._send_sequence:
                self._report_number += 1
                body["sequence"] = {"sender": self._report_sender, "number": self._report_number}
        self._supersede(body)
        try:
            alloc = self._send_report(body)
            with self._lock:
                self._drop_live(body)
            return alloc
        except _Superseded:
            # A newer report of the same or a later epoch was made while this one waited to be retried:
            # that one goes instead, and says what this one would have.
            with self._lock:
                return dict(self._last_allocation or {})
        except BoaError as error:
            with self._lock:
                kept = self._unsent_report
                if (_failed_send(error) and self._is_live(body)
                        and (kept is None or _not_after(kept, body))):
                    # Not lost: a loop that reports each epoch once would leave boa an epoch behind (its
                    # plan and the epoch's clock) until the next one, hours later. The poll sends it again.
                    if kept is not None:
                        self._drop_live(kept)
                    self._unsent_report = body
                else:
                    self._drop_live(body)
            # A stranger's page answered 200 (a captive portal) is warned of below, and kept above.
            if isinstance(error, BoaHTTPError) and error.status in (401, 403, 404):
                raise
            if isinstance(error, BoaHTTPError) and error.code in ENDED_CODES:
                # The job ended (cancelled, lost, done): should_stop() says so, in a poll's words.
                try:
                    self.allocation()
                except BoaError:
                    pass
                self._set_stop(f"job ended ({error.message})")
            else:
                self._warn_report(error)
            with self._lock:
                return dict(self._last_allocation or {})

    def _supersede(self, body):
        """A report made: the older ones it covers (the same epoch or an earlier one) are not sent again,
        the one kept included, and a retry of one waiting for its turn is not made."""
        with self._lock:
            self._live_reports = [older for older in self._live_reports if not _not_after(older, body)]
            if self._unsent_report is not None and not self._is_live(self._unsent_report):
                self._unsent_report = None
            self._live_reports.append(body)

    def _is_live(self, body):  # with the lock held
        return any(live is body for live in self._live_reports)

    def _drop_live(self, body):  # with the lock held
        self._live_reports = [live for live in self._live_reports if live is not body]

    def _send_report(self, body):
        """Sends a report (each attempt in the report line, and only while no newer report covers it) and
        returns boa's answer, checked to be boa's. Raises _Superseded when a newer one came first."""

        def wanted():
            with self._lock:
                return self._is_live(body)

        path = f"/v1/jobs/{self.job_id}/progress"
        try:
            answer = self._request("POST", path, body, wanted=wanted)
        except BoaHTTPError as error:
            if not ("sequence" in body and _sequence_unknown(error)):
                raise
            # A boa from before the sequence refuses the whole report for it: sent without, as it was
            # then, and so are the reports after it.
            with self._lock:
                self._send_sequence = False
                body.pop("sequence", None)
            answer = self._request("POST", path, body, wanted=wanted)
        return self._observe(self._report_answer(answer))

    def _report_answer(self, answer):
        """boa answers a report with the job's allocation: a 200 short of its fields is not boa's answer
        but a proxy's (a captive portal, an ingress gone wrong) and the report was not taken."""

        def integer(name):
            value = answer.get(name)
            return isinstance(value, int) and not isinstance(value, bool)

        if not (integer("jobId") and answer["jobId"] == self.job_id
                and all(integer(name) for name in ("width", "generation", "statEpoch"))
                and isinstance(answer.get("state"), str) and isinstance(answer.get("nodes"), list)):
            raise _NotBoaAnswer(f"unexpected answer from {self.url} (is BOA_URL a boa service?): {str(answer)[:80]!r}")
        return answer

    def _forget_unsent(self, unsent):
        """A kept report boa took or refused: not sent again."""
        with self._lock:
            self._drop_live(unsent)
            if self._unsent_report is unsent:
                self._unsent_report = None

    def _send_unsent(self):
        """The background poll's turn when a report boa did not take is kept: it is sent again (its answer
        is the allocation, as a poll's). Returns whether there was one and boa answered it."""
        with self._lock:
            unsent = self._unsent_report
        if unsent is None:
            return False
        try:
            self._send_report(unsent)
        except _Superseded:
            return False  # a newer report replaced it meanwhile
        except BoaHTTPError as error:
            if _passing(error) or error.status in (401, 403, 404):
                raise  # kept, for the next poll; a refused job is the poll's to handle
            # boa refused this report (an epoch overtaken meanwhile, the job ended): not sent again.
            self._forget_unsent(unsent)
            return False
        self._forget_unsent(unsent)
        return True

    def _warn_report(self, error, taken=False):
        # A training loop reports every epoch: one line a while, not one per report.
        now = time.monotonic()
        if self._report_warned_at is not None and now - self._report_warned_at < self.warn_every_seconds:
            return
        self._report_warned_at = now
        if taken:
            _log.warning("boa job %s: %s", self.job_id, error)
        else:
            _log.warning("boa job %s: progress report not taken, training goes on: %s", self.job_id, error)

    def complete(self):
        """Tells boa the job finished; boa frees its GPUs. Repeating it is harmless."""
        job = self._request("POST", f"/v1/jobs/{self.job_id}/complete")
        with self._lock:
            # The job is done: no report is wanted any more, nor a retry of one.
            self._unsent_report = None
            self._live_reports = []
        self._set_stop(f"job {job.get('state', 'done')}")
        return job

    def wait_for_width(self, timeout_seconds=None):
        """Polls until boa gives the job GPUs (width > 0); returns that allocation.

        A self-launched job calls this before training and again after stopping for a new
        generation: it adopts the allocation's generation and clears that stop, so should_stop()
        turns true at the next change. A SIGTERM or an ended job is never cleared: with one of those
        in place it raises BoaError rather than hand back GPUs. Raises BoaError too if the job ends
        meanwhile, SIGTERM comes while the width is 0, the timeout passes, or boa refuses the poll (a
        4xx); boa unreachable or failing (5xx, 429) is waited out like width 0, with a warning on the
        boa_job logger at the first such poll and then at most every warn_every_seconds."""
        self._heeded = True
        # "10" raised a bare TypeError here, after the first poll's wait had not even begun.
        if timeout_seconds is not None:
            _checked_option("timeout_seconds", timeout_seconds)
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        while True:
            alloc, trouble = {}, None
            try:
                alloc = self.allocation()
            except (BoaUnavailable, BoaHTTPError) as error:
                # A restart of boa outlasts one poll's retries; the job has not ended for it.
                if not _passing(error):
                    raise
                trouble = error
            self._warn_trouble(trouble)
            if alloc.get("state") in FINISHED_STATES:
                raise BoaError(f"job {self.job_id} is {alloc['state']}")
            if alloc.get("width", 0) > 0:
                if self._sigterm:
                    # Never cleared, as an ended job: GPUs handed back now would be stopped on at once.
                    raise BoaError(f"job {self.job_id} stopped for good (SIGTERM)")
                with self._lock:
                    if self.generation is None or self._stop_kind == "generation":
                        self.generation = alloc["generation"]
                        self._adopted_allocation = dict(alloc)
                        self._stop_kind = self._stop_reason = None
                    elif self._stop_kind is not None:
                        # Handing back GPUs while should_stop() stays true would send a caller that
                        # resumes on them straight back to stopping, in a loop.
                        raise BoaError(f"job {self.job_id} stopped for good ({self._stop_reason})")
                return alloc
            wait = self.poll_seconds
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    last = "" if trouble is None else f" (last poll: {trouble})"
                    raise BoaError(f"job {self.job_id} got no GPUs within {timeout_seconds} s{last}")
            self._pause(wait)
            # The handler replaced SIGTERM's default (exit): without this a waiting job would ignore it.
            if self._sigterm:
                raise BoaError("SIGTERM while waiting for GPUs")
            if self._stopped.is_set():
                raise BoaError("client closed while waiting for GPUs")

    def _warn_trouble(self, trouble):
        # A wrong BOA_URL fails like a boa restarting, which is waited out: without a word the job would
        # seem to wait for GPUs. So: at once, then at most every warn_every_seconds while it lasts.
        if trouble is None or self._stopped.is_set():
            self._warned_at = None
            return
        now = time.monotonic()
        if self._warned_at is not None and now - self._warned_at < self.warn_every_seconds:
            return
        self._warned_at = now
        if isinstance(trouble, BoaUnavailable):
            _log.warning("boa job %s: boa at %s is not reachable (%s); retrying while waiting for GPUs "
                         "(is BOA_URL right?)", self.job_id, self.url, trouble.reason)
        else:
            _log.warning("boa job %s: boa at %s answered %s %s: %s; retrying while waiting for GPUs",
                         self.job_id, self.url, trouble.status, trouble.code, trouble.message)

    def _pause(self, seconds):
        # Sleeps up to seconds; close() ends it at once, SIGTERM within 0.1 s. The handler only sets a
        # flag, read here: setting an Event from it takes a lock the main thread may hold (deadlock).
        end = time.monotonic() + seconds
        while not self._sigterm:
            left = end - time.monotonic()
            if left <= 0 or self._stopped.wait(min(left, 0.1)):
                return

    # ---- knowing when to stop ----

    def should_stop(self):
        """True once the job must checkpoint and exit: SIGTERM, a new generation, or the job ended."""
        self._heeded = True
        if self._sigterm:
            return True
        with self._lock:
            return self._stop_reason is not None

    @property
    def stop_reason(self):
        """Why should_stop() is true: "SIGTERM" (which outranks the others), a new generation, the job ended."""
        self._heeded = True
        if self._sigterm:
            return "SIGTERM"
        with self._lock:
            return self._stop_reason

    @property
    def last_allocation(self):
        with self._lock:
            return self._last_allocation

    @property
    def poll_error(self):
        """The last error of the background poll (it polls on after any but a self-launched job's refusal)."""
        with self._lock:
            return self._poll_error

    def start_polling(self):
        """Polls the allocation every poll_seconds in a daemon thread, so should_stop() sees rescales."""
        if self._poller is None:
            self._poller = threading.Thread(target=self._poll_loop, name="boa-poll", daemon=True)
            self._poller.start()
        return self

    def close(self):
        """Stops the background poll and gives SIGTERM back to the handler before the client's."""
        self._stopped.set()
        handler, self._sigterm_handler = self._sigterm_handler, None
        if (handler is not None and threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) is handler):
            previous = self._previous_sigterm
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        if self._poller is not None and self._poller is not threading.current_thread():
            self._poller.join(self.timeout_seconds + 1)

    def __enter__(self):
        return self.start_polling()

    def __exit__(self, *exc):
        self.close()
        return False

    def _poll_loop(self):
        while not self._stopped.wait(self.poll_seconds):
            try:
                if not self._send_unsent():
                    self.allocation()
                with self._lock:
                    self._poll_error = None
            except BoaHTTPError as error:
                with self._lock:
                    self._poll_error = error
                # The job is gone or the token is not its own: a self-launched job stops. Under the
                # executor it does not: rank 0 exiting 0 there means done, and a refusal may be a stranger
                # at BOA_URL for a while (a restart, a port reused); boa sends SIGTERM to replicas it drops.
                if not self._run_by_executor and error.status in (401, 403, 404):
                    self._set_stop(f"boa refused the allocation poll: {error}")
                    return
            except Exception as error:
                # Whatever goes wrong, poll on: a dead poll thread leaves should_stop() blind to rescales
                # and lets a self-launched job's lease lapse. Anything but a BoaError is a bug: say so,
                # once per kind, not every poll_seconds.
                with self._lock:
                    previous, self._poll_error = self._poll_error, error
                if not isinstance(error, BoaError) and type(previous) is not type(error):
                    _log.warning("boa job %s: the allocation poll failed; polling on", self.job_id,
                                 exc_info=True)

    def _observe(self, alloc):
        # Any JSON object from something other than boa (a proxy, another service at BOA_URL) read as "new
        # generation None": the replica stopped and exited 0, which the executor takes for the job done.
        generation = alloc.get("generation")
        if not isinstance(generation, int) or isinstance(generation, bool) or not isinstance(alloc.get("state"), str):
            raise BoaError(f"unexpected answer from {self.url} (is BOA_URL a boa service?): {str(alloc)[:80]!r}")
        with self._lock:
            self._last_allocation = alloc
        state = alloc.get("state")
        if state in FINISHED_STATES:
            self._set_stop(f"job {state}")
        elif self.generation is not None and alloc.get("generation") != self.generation:
            self._set_stop(
                f"new generation {alloc.get('generation')} (this replica is {self.generation})", "generation"
            )
        return alloc

    def _set_stop(self, reason, kind="ended"):
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason
                self._stop_kind = kind

    def _install_sigterm(self):
        # Python only lets the main thread install handlers; elsewhere the caller forwards SIGTERM.
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        owner = os.getpid()

        def on_sigterm(signum, frame):
            unheeded = os.getpid() == owner and not self._heeded
            if unheeded:
                self._sigterm = True
                _mark_sigterm(os.environ.get("BOA_SIGTERM_FILE"))
                if previous in (None, signal.SIG_DFL):
                    # os.write, not print or logging: the handler may interrupt a write to stderr.
                    os.write(2, (
                        f"boa job {self.job_id}: SIGTERM before this program asked should_stop(): it ends, as "
                        "without the client (to checkpoint on a rescale, check job.should_stop() in the "
                        "training loop: docs/client.md)\n").encode())
            if os.getpid() != owner or unheeded:
                # A forked child (a multiprocessing worker) inherited this handler: it is not the job,
                # and a pool ends its workers with SIGTERM, which must end them as it would without boa.
                # Nor does a program that never looks at should_stop(): it would not checkpoint and exit.
                signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
                if callable(previous) and previous not in (signal.SIG_DFL, signal.SIG_IGN):
                    previous(signum, frame)
                elif previous != signal.SIG_IGN:
                    os.kill(os.getpid(), signal.SIGTERM)
                return
            self._sigterm = True
            _mark_sigterm(os.environ.get("BOA_SIGTERM_FILE"))
            if callable(previous) and previous not in (signal.SIG_DFL, signal.SIG_IGN):
                previous(signum, frame)

        signal.signal(signal.SIGTERM, on_sigterm)
        self._sigterm_handler, self._previous_sigterm = on_sigterm, previous

    # ---- HTTP with bounded retries ----

    def _request(self, method, path, body=None, wanted=None):
        """`wanted`, given (a report's), is asked before each attempt, made in the report line: False
        raises _Superseded."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        delay = self.backoff_seconds
        attempt = 0
        while True:
            last = attempt == self.retries
            moved = False
            # After a SIGTERM the grace period is for the checkpoint: a cancel check against a boa that
            # does not answer took 10 s of torchrun's 30 (found in review).
            timeout = self.timeout_seconds
            if self._sigterm:
                timeout = min(timeout, self.sigterm_timeout_seconds)
            if wanted is not None:
                # The timeout starts with the attempt, not while it waits for its turn.
                self._report_line.acquire()
                if not wanted():
                    self._report_line.release()
                    raise _Superseded("a newer report was made")
            request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
            attempt_limit = _AttemptDeadline(timeout)
            try:
                with attempt_limit.opener.open(request, timeout=timeout) as response:
                    raw = response.read()
                if attempt_limit.expired:
                    raise TimeoutError  # the answer was cut off: not one to read
                return _json_object(raw, self.url)
            except urllib.error.HTTPError as error:
                failure = _http_error(error)
                # 4xx is the request's fault and will not change by asking again; 429 asks to wait.
                if (error.code < 500 and error.code != 429) or last:
                    raise failure from None
                wait = _retry_after(error) or delay * (0.5 + random.random() / 2)
            except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
                # Refused, reset, timed out, a name not found: the service may be restarting, maybe elsewhere.
                if attempt_limit.expired:
                    error = TimeoutError()  # not the reset or short read the cut left
                moved = self._follow_moved_url()
                if last and not moved:
                    reason = _unreachable_reason(error, timeout)
                    raise BoaUnavailable(
                        f"boa at {self.url} not reachable after {self.retries + 1} attempts: {reason}", reason
                    ) from None
                wait = delay * (0.5 + random.random() / 2)  # jitter: replicas do not retry in step
            finally:
                attempt_limit.stop()
                if wanted is not None:
                    self._report_line.release()
            # After a SIGTERM the job has a grace period to checkpoint in: no retry, no wait (found in
            # review: a report retried against an unreachable boa held a SIGTERM up for 8-70 s).
            deadline = time.monotonic() + wait
            while not self._sigterm and time.monotonic() < deadline:
                if self._stopped.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                    raise BoaUnavailable("client closed while retrying")
            if self._sigterm:
                raise BoaUnavailable("SIGTERM: not retried, the job is to stop", "SIGTERM")
            if moved:
                # At a new address the retries start over. Only a change of the file's does that: no loop.
                attempt, delay = 0, self.backoff_seconds
            else:
                attempt, delay = attempt + 1, min(delay * 2, self.max_backoff_seconds)

    def _follow_moved_url(self):
        """Under boa's local executor, a boa restarted at another address (--port, --public-url) writes it
        to BOA_URL_FILE, since this process's BOA_URL cannot change: read when boa does not answer, and
        taken if it is another valid URL. Returns whether the client moved to it."""
        if not self._url_file:
            return False
        try:
            with open(self._url_file) as file:
                text = file.read().strip()
        except (OSError, ValueError):
            return False  # its folder gone (the replica is being forgotten): stay where we are
        url = text.rstrip("/")
        # Not one a BOA_URL would be refused for: requests there would fail for ever, as at a wrong BOA_URL.
        if not url or _url_problem(text):
            return False
        with self._lock:  # the poll thread and the training loop may both find boa gone
            if url == self.url:
                return False
            _log.warning("boa job %s: boa moved from %s to %s (BOA_URL_FILE); reporting there",
                         self.job_id, self.url, url)
            self.url = url
        return True


def _unreachable_reason(error, timeout_seconds):
    """Why a request got no answer, short: ECONNREFUSED, timed out after 10 s, the DNS's word."""
    reason = getattr(error, "reason", error)  # a URLError wraps the OSError
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return f"timed out after {timeout_seconds:g} s"
    if isinstance(reason, socket.gaierror):
        return f"name not resolved: {reason.strerror}"
    # The builtin ones only: an ssl.SSLError's errno is not the OS's.
    if type(reason).__module__ == "builtins" and getattr(reason, "errno", None) in errno.errorcode:
        return errno.errorcode[reason.errno]
    return str(reason) or type(reason).__name__


def _json_object(raw, url):
    # Every answer of boa's is a JSON object. Anything else (a proxy's or a stranger's HTML page) is a
    # BoaError, which callers catching BoaError expect, not a ValueError.
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise _NotBoaAnswer(f"unexpected answer from {url} (is BOA_URL a boa service?): {raw[:80]!r}")
    return answer


def _http_error(error):
    try:
        body = json.loads(error.read() or b"{}")
    except (ValueError, OSError, http.client.HTTPException):
        body = None
    detail = body.get("error") if isinstance(body, dict) else None
    # boa answers {"error": {"code", "message", "field"}}; a proxy or another framework at BOA_URL may
    # answer {"error": "Not Found"}, whose string is the message.
    payload = detail if isinstance(detail, dict) else {}
    message = payload.get("message")
    if message is None:
        message = detail if isinstance(detail, str) else error.reason
    return BoaHTTPError(error.code, payload.get("code", "http_error"), message, payload.get("field"))


class _TokenKeepingRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect, but sends the job token on only to the same host, never down to plain http.

    urllib copies every header onto a redirect, to any host: an ingress redirecting elsewhere, or a
    stranger at BOA_URL, would get the token (fetch, in the Node client, drops it across origins).
    A POST (a report, complete) is re-sent with its body on a 307 or 308 to the same host; anything else
    refuses it with a BoaHTTPError naming where it pointed: urllib refused a 307/308 POST (every report
    dropped) and turned a 301/302 POST into a GET, whose 404 report() took for the job refused."""

    # Python 3.8 to 3.10 have no 308 handler (a 308 was an error even for a GET).
    http_error_308 = urllib.request.HTTPRedirectHandler.http_error_302

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, to = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        same_host = to.netloc == old.netloc and not (old.scheme == "https" and to.scheme != "https")
        method = req.get_method()
        if method in ("GET", "HEAD"):
            # Before 3.11 urllib's own rule has no 308, which for a GET is a 307.
            new = super().redirect_request(req, fp, 307 if code == 308 else code, msg, headers, newurl)
            if new is not None and not same_host:
                new.remove_header("Authorization")
            return new
        if code in (307, 308) and same_host:
            return urllib.request.Request(newurl, data=req.data, headers=dict(req.headers),
                                          origin_req_host=req.origin_req_host, unverifiable=True, method=method)
        fp.close()
        raise _redirect_refused(method, req.full_url, code, newurl, same_host)


def _redirect_refused(method, url, code, to, same_host):
    """The error for a redirect of a POST the clients do not follow (the same words as the Node client's)."""
    if code in (307, 308):
        why = "it points to another host (or from https to http), and the job's token goes only to BOA_URL's"
    else:
        why = f"a {code} turns the {method} into a GET, which boa does not answer"
    return BoaHTTPError(
        code,
        "redirect_not_followed",
        f"{method} {url} was redirected to {to}; not followed: {why}. Set BOA_URL to the address boa is at",
    )


def _shut(sock):
    try:
        # The plain socket's: an SSLSocket's own shutdown drops its TLS state under a reader.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # closed meanwhile


class _Tracking:
    """A urllib handler that hands the sockets it connects to an _AttemptDeadline, to cut."""

    def __init__(self, deadline, **kwargs):
        super().__init__(**kwargs)
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):
        deadline = self._deadline

        def connection(*args, **options):
            made = http_class(*args, **options)
            connect = made.connect

            def tracked_connect():
                connect()
                # Kept here: urllib drops the connection's own reference once the headers are read.
                deadline.track(made.sock)

            made.connect = tracked_connect
            return made

        return super().do_open(connection, req, **kwargs)


class _TrackedHTTPHandler(_Tracking, urllib.request.HTTPHandler):
    pass


_TRACKED = [_TrackedHTTPHandler]
if hasattr(urllib.request, "HTTPSHandler"):  # a Python built without ssl has none

    class _TrackedHTTPSHandler(_Tracking, urllib.request.HTTPSHandler):
        pass

    _TRACKED.append(_TrackedHTTPSHandler)


class _AttemptDeadline:
    """One attempt's whole time limit, as the Node client's AbortSignal.timeout. urllib's timeout bounds
    each socket operation, not the request: a server (a proxy) sending its answer a byte at a time held
    a request, and the training loop that made it, as long as it liked (failure-mode review: 30 s for a
    1 s timeout). At the deadline the attempt's sockets are shut down, which ends a blocked read."""

    def __init__(self, seconds):
        self.expired = False
        self._sockets = []
        self._lock = threading.Lock()
        self.opener = urllib.request.build_opener(_TokenKeepingRedirects, *(handler(self) for handler in _TRACKED))
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def track(self, sock):
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:  # connected just as the time ran out
            _shut(sock)

    def _cut(self):
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def stop(self):
        self._timer.cancel()


# boa's answer to a report for a job that is no longer waiting or running.
ENDED_CODES = ("not_active", "already_finished")


def _not_after(older, newer):
    """Whether the newer report covers the older one: the same epoch or a later one."""
    try:
        return older["statEpoch"] <= newer["statEpoch"]
    except TypeError:  # a non-number, which boa refuses anyway
        return True


def _sequence_unknown(error):
    """Whether boa refused a report's `sequence` as a field it does not know (one from before it)."""
    return error.status == 400 and error.field == "sequence"


def _failed_send(error):
    """Whether a report's send failed for now (boa unreachable or failing, or a proxy answering for it)."""
    return _passing(error) or isinstance(error, _NotBoaAnswer)


def _passing(error):
    """Whether a request's error is boa (or the way to it) failing for now: what retries are for."""
    return isinstance(error, BoaUnavailable) or (
        isinstance(error, BoaHTTPError) and (error.status >= 500 or error.status == 429)
    )


def _retry_after(error):
    """Retry-After in seconds, at most 60; None for none, or one not above 0, as the Node client reads
    it: -5 or nan was no wait at all, and the retries went at once (failure-mode review)."""
    try:
        seconds = float(error.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return None
    return min(seconds, 60.0) if seconds > 0 else None

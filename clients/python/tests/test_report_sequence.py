"""Each report carries its place among its client's (`sequence`): an attempt given up on, forwarded late.

Run by test/clients/report-sequence.test.ts against a real boa service (BOA_TEST_URL), with the helpers
of test_boa_job.py; each case is also held for the Node client there. An attempt the client gave up on
(timed out), forwarded by a proxy after the newer report, changes nothing at boa. Before, its lower
workDoneSeconds of the same epoch was taken and boa's view went back until the next report.
"""

import json
import logging
import unittest

from test_boa_job import URL, QuickClients, control, wait_until


@unittest.skipUnless(URL, "BOA_TEST_URL is not set: run through test/clients/report-sequence.test.ts")
class ReportSequenceTest(QuickClients, unittest.TestCase):
    def setUp(self):
        control("/__test/answer-next", {"count": 0})
        control("/__test/release")
        self.addCleanup(control, "/__test/release")

    def warnings(self):
        """The boa_job logger's warnings from now on (assertNoLogs is Python 3.10+; the client is 3.8+)."""
        records = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = records.append
        logger = logging.getLogger("boa_job")
        logger.addHandler(handler)
        self.addCleanup(logger.removeHandler, handler)
        return records

    def sequences(self, job):
        return control(f"/__test/report-sequences?job={job['id']}")

    def test_an_attempt_that_timed_out_and_reaches_boa_after_the_newer_report_changes_nothing(self):
        job = control("/__test/job")
        client = self.client(job, timeout_seconds=3.0)  # its retry's answer may be slow on a loaded machine
        # A proxy sits on the first attempt: the client gives up on it and its retry is taken.
        control("/__test/hold-next", {"key": f"POST /v1/jobs/{job['id']}/progress"})
        self.assertEqual(client.report(1, 10)["statEpoch"], 1)
        self.assertTrue(control("/__test/holding")["holding"])
        self.assertEqual(client.report(1, 50)["statEpoch"], 1)
        self.assertEqual(self.view(job)["workDoneSeconds"], 50)
        control("/__test/release")  # the proxy forwards it at last
        self.assertTrue(wait_until(lambda: control("/__test/held-answered")["answered"], 20))
        self.assertEqual(self.view(job)["workDoneSeconds"], 50)

    def test_each_client_is_a_sender_of_its_own_numbering_its_reports_from_1(self):
        job = control("/__test/job")
        a = self.client(job)
        b = self.client(job)
        a.report(1, 10)
        a.report(1, 20)
        b.report(1, 30)
        self.assertEqual(sorted(self.sequences(job).values()), [1, 2])

    def test_a_boa_from_before_the_sequence_which_refuses_it_gets_the_report_without_it(self):
        job = control("/__test/job")
        client = self.client(job)
        refusal = {"error": {
            "code": "invalid",
            "message": 'unknown field "sequence"; the fields are statEpoch, workDoneSeconds, generation',
            "field": "sequence",
        }}
        control("/__test/answer-next",
                {"count": 1, "status": 400, "contentType": "application/json", "body": json.dumps(refusal)})
        warned = self.warnings()
        self.assertEqual(client.report(1, 10)["statEpoch"], 1)
        client.report(1, 20)
        self.assertEqual([record.getMessage() for record in warned], [])
        self.assertEqual(self.view(job)["workDoneSeconds"], 20)
        self.assertEqual(self.sequences(job), {})  # neither sent one again


if __name__ == "__main__":
    unittest.main()

"""A report sent again never lands after a newer one; a 200 that is not boa's answer is no report taken.

Run by test/clients/resend-order.test.ts against a real boa service (BOA_TEST_URL), with the helpers of
test_boa_job.py; each case is also held for the Node client there. boa refuses an older epoch (409
epoch_regressed) but takes a lower workDoneSeconds of the same epoch: a retry or a resend of an older
report that landed after the newer one put boa's view back until the next report (found in review).
"""

import threading
import time
import unittest

from test_boa_job import URL, QuickClients, control, wait_until


@unittest.skipUnless(URL, "BOA_TEST_URL is not set: run through test/clients/resend-order.test.ts")
class ResendOrderTest(QuickClients, unittest.TestCase):
    def setUp(self):
        control("/__test/fail-next", {"count": 0})
        control("/__test/answer-next", {"count": 0})
        control("/__test/release")
        control("/__test/requests")
        self.addCleanup(control, "/__test/release")


    def post_arrives(self, job, seconds):
        """Whether a progress report of the job reaches boa's door within `seconds` (held or not)."""
        seen = [0]

        def arrived():
            seen[0] += self.posts(job)
            return seen[0] > 0

        return wait_until(arrived, seconds)

    def test_a_kept_report_whose_resend_a_proxy_holds_up_goes_to_boa_before_the_newer_report(self):
        # Before: the newer report went at once and was taken, the resend landed after it, and boa's
        # workDoneSeconds went back from 50 to 10 until the next report.
        job = control("/__test/job")
        client = self.client(job)
        control("/__test/fail-next", {"count": 2, "status": 503})  # the report and its one retry: kept
        with self.assertLogs("boa_job", "WARNING"):
            client.report(1, 10)
        control("/__test/hold-next", {"key": f"POST /v1/jobs/{job['id']}/progress"})
        client.start_polling()
        self.assertTrue(wait_until(lambda: control("/__test/holding")["holding"], 20))  # the resend
        self.posts(job)
        answers = []
        newer = threading.Thread(target=lambda: answers.append(client.report(1, 50)), daemon=True)
        newer.start()
        # It waits for the attempt on the wire to be answered: none reaches boa meanwhile.
        self.assertFalse(self.post_arrives(job, 1.5))
        control("/__test/release")
        newer.join(30)
        self.assertEqual(answers[0]["statEpoch"], 1)
        time.sleep(0.5)  # a resend still to come would land here
        self.assertEqual(self.view(job)["workDoneSeconds"], 50)
        self.assertEqual(client.last_allocation["statEpoch"], 1)

    def test_a_reports_retry_is_not_sent_once_a_newer_report_of_the_same_epoch_was_taken(self):
        # Before: the retry went out after its backoff and boa's workDoneSeconds went back to 10; had it
        # failed instead, it was kept and sent again by the poll.
        job = control("/__test/job")
        client = self.client(job, backoff_seconds=2.0)  # its retry waits 1 to 2 s
        control("/__test/fail-next", {"count": 1, "status": 503})
        older = threading.Thread(target=client.report, args=(1, 10), daemon=True)
        older.start()
        self.assertTrue(self.post_arrives(job, 20))  # answered 503: its retry waits
        self.assertEqual(client.report(1, 50)["statEpoch"], 1)
        self.assertEqual(self.posts(job), 1)  # that one
        older.join(30)
        client.start_polling()
        time.sleep(0.5)
        self.assertEqual(self.posts(job), 0)  # neither the retry nor a resend of it
        self.assertEqual(self.view(job)["workDoneSeconds"], 50)

    def test_a_200_that_is_not_boas_answer_is_a_failed_send_kept_sent_again_and_warned_once(self):
        # Before: the report was taken for lost ("not taken") and not kept, and boa never had it.
        pages = [
            ("a captive portal", "text/html", "<html><body>Sign in to the network</body></html>"),
            ("JSON of another service", "application/json", '{"ok":true}'),
            ("JSON short of an allocation", "application/json", '{"state":"running","generation":%d}'),
        ]
        for epoch, (name, content_type, body) in enumerate(pages, start=1):
            with self.subTest(name):
                job = control("/__test/job")
                client = self.client(job)
                page = body % job["generation"] if "%d" in body else body
                control("/__test/answer-next",
                        {"count": 3, "status": 200, "contentType": content_type, "body": page})
                # Only the client asks boa until the pages are used up: its own view tells when.
                with self.assertLogs("boa_job", "WARNING") as logged:
                    self.assertEqual(client.report(epoch, 5), client.last_allocation or {})
                    client.start_polling()  # its first two sends meet the page again
                    self.assertTrue(wait_until(lambda: (client.last_allocation or {}).get("statEpoch") == epoch, 20))
                self.assertEqual(self.view(job)["statEpoch"], epoch)
                self.assertEqual(self.view(job)["workDoneSeconds"], 5)
                self.assertEqual(len(logged.output), 1)
                self.assertRegex(
                    logged.output[0],
                    rf"boa job {job['id']}: progress report not taken, training goes on: unexpected answer from "
                    r".* \(is BOA_URL a boa service\?\)",
                )
                client.close()


if __name__ == "__main__":
    unittest.main()

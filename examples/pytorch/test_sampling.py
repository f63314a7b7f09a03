"""Tests of sampling.py (no torch needed): run by test/clients/examples.test.ts, or
`python3 -m unittest test_sampling` in this folder."""

import random
import unittest
from collections import Counter

from sampling import rank_batches, rank_share


def trained_in_epoch(order, global_batch, widths_and_steps):
    """The samples trained in one epoch run by generations of the given widths, each stopping after its
    number of steps (None: to the end), resuming from the samples consumed as train.py checkpoints them."""
    trained, consumed = Counter(), 0
    for world, steps in widths_and_steps:
        per_rank = [rank_batches(order, global_batch, world, rank, consumed) for rank in range(world)]
        done = len(per_rank[0]) if steps is None else steps
        for rank in range(world):
            for batch in per_rank[rank][:done]:
                trained.update(batch)
        consumed += done * global_batch
    return trained


class SamplingTest(unittest.TestCase):
    def test_a_global_batch_is_split_exactly_the_first_ranks_taking_one_more(self):
        for world in (1, 3, 11, 13, 40, 48, 64, 256):
            shares = [rank_share(256, world, rank) for rank in range(world)]
            self.assertEqual(sum(size for _, size in shares), 256)
            self.assertEqual([start for start, _ in shares], [sum(s for _, s in shares[:r]) for r in range(world)])
            sizes = [size for _, size in shares]
            self.assertEqual(sizes, sorted(sizes, reverse=True))
            self.assertLessEqual(max(sizes) - min(sizes), 1)
        self.assertEqual([rank_share(256, 40, rank)[1] for rank in (0, 15, 16, 39)], [7, 7, 6, 6])
        with self.assertRaisesRegex(ValueError, "cannot be split over 300 GPUs"):
            rank_share(256, 300, 0)

    def test_a_resume_at_another_width_trains_every_sample_of_the_epoch_once(self):
        # The review's cases: 40 -> 64 at step 200 left 3,200 samples untrained that epoch; 64 -> 40
        # trained 3,200 twice (a per-GPU batch of 256 // world, and the checkpoint kept only the step).
        order = list(range(65536))
        random.Random(0).shuffle(order)
        for first, second, stop in ((40, 64, 200), (64, 40, 200), (16, 11, 128), (13, 3, 100), (11, 13, 1)):
            trained = trained_in_epoch(order, 256, [(first, stop), (second, None)])
            self.assertEqual(trained, Counter(order), f"{first} -> {second} at step {stop}")
        # Several rescales in one epoch, and a remainder of less than a global batch left out at any width.
        order = order[:10_000]
        trained = trained_in_epoch(order, 256, [(48, 5), (7, 0), (13, 20), (64, None)])
        self.assertEqual(trained, Counter(order[: 10_000 - 10_000 % 256]))


if __name__ == "__main__":
    unittest.main()

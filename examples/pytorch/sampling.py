"""Which samples each rank of train.py trains, at any width: plain Python, so it is tested without torch.

An epoch is one order of all samples, the same at every width (seeded by the epoch alone), cut into
global batches of global_batch samples; a remainder smaller than a global batch is left out, the same
samples at every width. Each global batch is split exactly over the ranks: the first
global_batch % world ranks take one sample more. A checkpoint keeps how many samples of the epoch were
consumed, so a resume at another width starts at the next sample: none is lost or trained twice, even
when the width does not divide the global batch (boa picks widths such as 11, 13, 40 or 48).
"""


def rank_share(global_batch, world, rank):
    """(start, size): this rank's slice of every global batch."""
    if not 0 < world <= global_batch:
        raise ValueError(f"a global batch of {global_batch} cannot be split over {world} GPUs")
    base, extra = divmod(global_batch, world)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)


def rank_batches(order, global_batch, world, rank, consumed=0):
    """This rank's batches (lists of sample indices) for the rest of an epoch whose first consumed
    samples of order were trained already. Step k of them ends at consumed + (k + 1) * global_batch."""
    start, size = rank_share(global_batch, world, rank)
    return [
        order[offset + start : offset + start + size]
        for offset in range(consumed, len(order) - global_batch + 1, global_batch)
    ]

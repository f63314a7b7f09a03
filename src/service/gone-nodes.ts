/**
 * When a node the ledger holds open, and a listing no longer shows, stopped being paid. The tick that
 * sees it gone may come long after (boa down, its listings failing): ended there, the ledger charged a
 * node replaced while boa was down for the whole stop (600 s of 4 GPUs in
 * test/service/kubernetes-node-gone-restart.test.ts). Where the group says when its termination ended
 * (aws/asg-launches.ts: after the instance left running, when EC2 stopped billing it), the row ends
 * then; elsewhere (the local pool, a termination still under way or not read) at the tick, as before.
 * Known only once the termination has ended, so a row closed at the tick is never ended earlier later:
 * the termination then ended after that tick.
 */

/** EC2 bills Linux on demand per second, 60 s at least. */
export const MIN_BILLED_MS = 60_000;

/**
 * The end of a gone node's row: its termination's end (`gone`, by id) when known, never before the last
 * listing that showed it (the time until which ticks already counted it paid, which a clock of boa's
 * ahead of AWS's must not take back; at worst it over-counts), nor before 60 s from its launch, nor
 * after `now`. That listing is the ledger's stored one (`node.lastListedAt`, store/ledger-store.ts), else
 * the service's `lastListedAt`: after a restart the latter is the last tick before it, which may be long
 * after the last listing (listings failing, then kill -9), and a node ended meanwhile was charged until
 * that tick (test/service/kubernetes-crash-property.test.ts). The time taken back, after the last
 * listing, was only ever summed in memory (store/paid-window.ts), updated in the transaction that ends
 * the row.
 */
export function goneAtOf(
  gone: ReadonlyMap<string, number>,
  lastListedAt: number,
  now: number,
): (node: {
  readonly id: string;
  readonly launchedAt: number;
  readonly lastListedAt?: number | undefined;
}) => number {
  return (node) => {
    const ended = gone.get(node.id);
    if (ended === undefined) return now;
    const listed = node.lastListedAt ?? lastListedAt;
    return Math.min(now, Math.max(ended, listed, node.launchedAt + MIN_BILLED_MS));
  };
}

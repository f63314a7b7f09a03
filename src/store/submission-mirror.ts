/**
 * The jobs' submissions the rate estimator reads, mirrored in memory. The estimator reads the last two
 * days' submissions at every tick (the published LoadNeeds metric) and at every GET of the budget: read
 * from SQLite, 14,400 rows at 1,000 jobs' churn, that was 1.2 ms of a 3-5 ms tick (bench:tick, profiled).
 * Jobs are never deleted and their ids only grow (AUTOINCREMENT), so the mirror takes in what is new
 * by id; a read reaching further back than it holds asks the store again.
 */
import { gt } from 'drizzle-orm';
import type { Db } from './db.ts';
import { jobs } from './schema.ts';

export interface Submission {
  readonly className: string;
  readonly submittedAt: number;
}

/** What the mirror asks of the store: the jobs submitted after a time, and the jobs after an id. */
export interface SubmissionSource {
  /** Jobs submitted after `since`, with the highest job id there is (0 with no job). */
  submittedAfter(since: number): { rows: Submission[]; highestId: number };
  /** Jobs with an id above `id`, in id order. */
  idsAfter(id: number): Array<Submission & { readonly id: number }>;
}

export class SubmissionMirror {
  /** Every job submitted after `heldAfter` (no order); undefined until the first read. */
  private held: Submission[] | undefined;
  private heldAfter = Number.POSITIVE_INFINITY;
  private highestId = 0;
  /** The oldest `since` asked for in the reads since the last trim, and how many reads those were. */
  private oldestAsked = Number.POSITIVE_INFINITY;
  private reads = 0;

  /** `trimEvery`: reads between trims (a test sets it small). */
  constructor(
    private readonly source: SubmissionSource,
    private readonly trimEvery = 64,
  ) {}

  /** Submissions after `since` (a new array; its entries are shared and must not be changed). */
  since(since: number): Submission[] {
    // As the SQL reads it (no row is after NaN), and never kept as the floor: no comparison with it holds.
    if (Number.isNaN(since)) return [];
    if (this.held === undefined || since < this.heldAfter) {
      const { rows, highestId } = this.source.submittedAfter(since);
      this.held = rows;
      this.heldAfter = since;
      this.highestId = highestId;
    } else {
      for (const row of this.source.idsAfter(this.highestId)) {
        this.highestId = row.id;
        if (row.submittedAt > this.heldAfter)
          this.held.push({ className: row.className, submittedAt: row.submittedAt });
      }
    }
    const held = this.held;
    const out = held.filter((row) => row.submittedAt > since);
    this.oldestAsked = Math.min(this.oldestAsked, since);
    // The windows readers ask for slide forward: what is older than every read of a while goes (a
    // reader that asks further back again reloads), so the mirror holds days, not the service's life.
    if (++this.reads >= this.trimEvery) {
      const floor = this.oldestAsked;
      if (floor > this.heldAfter) {
        this.held = held.filter((row) => row.submittedAt > floor);
        this.heldAfter = floor;
      }
      this.oldestAsked = Number.POSITIVE_INFINITY;
      this.reads = 0;
    }
    return out;
  }

  /** Rows held now (what a trim bounds). */
  get heldRows(): number {
    return this.held?.length ?? 0;
  }

  /** Forgets what it holds (a transaction rolled back: the rows it took in may be gone). */
  reset(): void {
    this.held = undefined;
    this.heldAfter = Number.POSITIVE_INFINITY;
    this.highestId = 0;
    this.oldestAsked = Number.POSITIVE_INFINITY;
    this.reads = 0;
  }
}

/** The store's side: the first read through the submission-time index, then new jobs by id. */
export function submissionSource(db: Db): SubmissionSource {
  const after = db.$client.prepare(
    'SELECT id, class_name AS className, submitted_at AS submittedAt FROM jobs WHERE id > ? ORDER BY id',
  );
  const highest = db.$client.prepare('SELECT coalesce(max(id), 0) FROM jobs').pluck();
  return {
    submittedAfter: (since) => ({
      rows: db
        .select({ className: jobs.className, submittedAt: jobs.submittedAt })
        .from(jobs)
        .where(gt(jobs.submittedAt, since))
        .all(),
      highestId: highest.get() as number,
    }),
    idsAfter: (id) => after.all(id) as Array<Submission & { id: number }>,
  };
}

/**
 * A benchmark's targets, checked where they live: each one's value against its limit, in the JSON
 * (`targets`), and the exit code 1 when one is missed, so a missed target is not a number read past.
 */
export interface Target {
  readonly value: number;
  /** The value must be at most this (speed, memory, overspend)... */
  readonly atMost?: number;
  /** ...or at least this. */
  readonly atLeast?: number;
}

export interface TargetResult extends Target {
  readonly met: boolean;
}

export function checkTargets(targets: Readonly<Record<string, Target>>): Record<string, TargetResult> {
  const results: Record<string, TargetResult> = {};
  for (const [name, target] of Object.entries(targets)) {
    const met =
      (target.atMost === undefined || target.value <= target.atMost) &&
      (target.atLeast === undefined || target.value >= target.atLeast);
    results[name] = { ...target, met };
    if (!met) {
      const limit = target.atMost !== undefined ? `at most ${target.atMost}` : `at least ${target.atLeast}`;
      process.stderr.write(`target missed: ${name} is ${target.value}, wanted ${limit}\n`);
      process.exitCode = 1;
    }
  }
  return results;
}

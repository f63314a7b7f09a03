/**
 * Arrival rates per class: submissions in a sliding window, blended with a configured prior worth a
 * few hours of observation, so a new service plans with the prior and drifts to what it sees.
 */
export function estimateRates(
  classes: ReadonlyArray<{ name: string; priorRatePerHour: number }>,
  submissions: ReadonlyArray<{ className: string; submittedAt: number }>,
  options: { now: number; windowHours: number; priorWeightHours: number; observedSince: number },
): Record<string, number> {
  const windowStart = Math.max(options.now - options.windowHours * 3_600_000, options.observedSince);
  const observedHours = Math.max(0, (options.now - windowStart) / 3_600_000);
  const counts = new Map<string, number>();
  for (const s of submissions) {
    if (s.submittedAt > windowStart && s.submittedAt <= options.now) {
      counts.set(s.className, (counts.get(s.className) ?? 0) + 1);
    }
  }
  const rates: Record<string, number> = {};
  for (const c of classes) {
    const weight = options.priorWeightHours + observedHours;
    rates[c.name] =
      weight > 0 ? (c.priorRatePerHour * options.priorWeightHours + (counts.get(c.name) ?? 0)) / weight : 0;
  }
  return rates;
}

/**
 * Work of one statistical epoch from an observed duration: seconds at a width, less the rescale, times
 * the profile's speedup at that width, is the epoch's work on 1 GPU.
 */
export function workFromDuration(seconds: number, rescaleSeconds: number, speedup: number): number {
  return Math.max(0, seconds - rescaleSeconds) * speedup;
}

/** Blends the profile's work with observed samples; the profile counts as `priorSamples` observations. */
export function blendWork(profileWork: number, samples: readonly number[], priorSamples = 3): number {
  const sum = samples.reduce((a, b) => a + b, 0);
  return (profileWork * priorSamples + sum) / (priorSamples + samples.length);
}

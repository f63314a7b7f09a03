/**
 * An evaluator written from Lemma 4.8 directly over the profile JSON, sharing no code with src/, so tests
 * can check the numbers the calculators report against the widths they print.
 */
interface RawProfile {
  classes: Array<{
    name: string;
    weight: number;
    rescaleSeconds: number;
    epochs: Array<{ workSeconds: number; speedup: Record<string, number> }>;
  }>;
}

export function independentEvaluate(
  profile: RawProfile,
  rates: Record<string, number>,
  plan: Record<string, Array<{ share: number; widths: number[] }>>,
): { gpuHoursPerHour: number; avgJctSeconds: number } {
  let weightedJct = 0;
  let weightedRate = 0;
  let gpuSecondsPerHour = 0;
  for (const [name, rate] of Object.entries(rates)) {
    const cls = profile.classes.find((c) => c.name === name);
    if (!cls) throw new Error(`no class ${name}`);
    const shares = plan[name];
    if (!shares) throw new Error(`plan lacks ${name}`);
    for (const { share, widths } of shares) {
      let t = 0;
      let g = 0;
      for (let j = 0; j < cls.epochs.length; j++) {
        const k = widths[j] as number;
        const s = cls.epochs[j]?.speedup[String(k)];
        if (s === undefined) throw new Error(`${name} epoch ${j}: width ${k} not in the profile`);
        const restart = j === 0 || widths[j - 1] !== k ? cls.rescaleSeconds : 0;
        const seconds = (cls.epochs[j]?.workSeconds as number) / s + restart;
        t += seconds;
        g += k * seconds;
      }
      weightedJct += rate * cls.weight * share * t;
      gpuSecondsPerHour += rate * share * g;
    }
    weightedRate += rate * cls.weight;
  }
  return { gpuHoursPerHour: gpuSecondsPerHour / 3600, avgJctSeconds: weightedJct / weightedRate };
}

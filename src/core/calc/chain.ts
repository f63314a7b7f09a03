import type { JobCost } from '../evaluate.ts';
import type { PlanningClass } from '../instance.ts';

/**
 * The per-class chain dynamic programme of the exact calculator (BOA.md): minimises
 * timeWeight * T + gpuWeight * G over integer widths with rescale costs, exactly.
 * The rescale indicator couples only neighbouring epochs, so (epoch, width) is a sufficient state.
 */
export interface ChainSolution extends JobCost {
  readonly widths: number[];
}

interface CompiledEpoch {
  readonly widths: Int32Array;
  /** Seconds per job at each width, without rescale. */
  readonly seconds: Float64Array;
  /** Index of the same width in the previous epoch, or -1. */
  readonly previousIndex: Int32Array;
}

export interface CompiledClass {
  readonly source: PlanningClass;
  readonly epochs: readonly CompiledEpoch[];
  readonly maxCandidates: number;
}

export function compileClass(cls: PlanningClass): CompiledClass {
  const epochs = cls.epochs.map((epoch, j) => {
    const previous = j > 0 ? (cls.epochs[j - 1]?.widths ?? []) : [];
    return {
      widths: Int32Array.from(epoch.widths),
      seconds: Float64Array.from(epoch.speedups, (s) => epoch.workSeconds / s),
      previousIndex: Int32Array.from(epoch.widths, (k) => previous.indexOf(k)),
    };
  });
  return { source: cls, epochs, maxCandidates: Math.max(...epochs.map((e) => e.widths.length)) };
}

const TIE = 1e-12;

/** True when (objective a, tiebreak a) is strictly better than (objective b, tiebreak b). */
function better(objA: number, tieA: number, objB: number, tieB: number): boolean {
  const scale = Math.max(Math.abs(objA), Math.abs(objB));
  if (objA < objB - TIE * scale) return true;
  if (objA > objB + TIE * scale) return false;
  return tieA < tieB;
}

/**
 * Minimises timeWeight * T + gpuWeight * G for one job of the class. Ties go to less GPU-time
 * (or, when timeWeight is 0, to less time), so the two ends of the frontier are well defined.
 */
export function solveChain(compiled: CompiledClass, timeWeight: number, gpuWeight: number): ChainSolution {
  const { epochs, source } = compiled;
  const rescale = source.rescaleSeconds;
  const tieOnTime = timeWeight === 0;
  const n = compiled.maxCandidates;
  let prevT = new Float64Array(n);
  let prevG = new Float64Array(n);
  let curT = new Float64Array(n);
  let curG = new Float64Array(n);
  // from[j][c] >= 0: came from that index of epoch j-1 by a rescale; -1: kept the width; -2: first epoch.
  const from: Int32Array[] = [];
  let prevCount = 0;
  for (let j = 0; j < epochs.length; j++) {
    const epoch = epochs[j] as CompiledEpoch;
    const count = epoch.widths.length;
    const choice = new Int32Array(count);
    // Best predecessor for a rescale: the same for every target width once its cost is added.
    let bestPrev = -1;
    for (let p = 0; p < prevCount; p++) {
      const obj = timeWeight * (prevT[p] as number) + gpuWeight * (prevG[p] as number);
      const tie = tieOnTime ? (prevT[p] as number) : (prevG[p] as number);
      if (bestPrev < 0) {
        bestPrev = p;
        continue;
      }
      const bObj = timeWeight * (prevT[bestPrev] as number) + gpuWeight * (prevG[bestPrev] as number);
      const bTie = tieOnTime ? (prevT[bestPrev] as number) : (prevG[bestPrev] as number);
      if (better(obj, tie, bObj, bTie)) bestPrev = p;
    }
    for (let c = 0; c < count; c++) {
      const k = epoch.widths[c] as number;
      const seconds = epoch.seconds[c] as number;
      let t: number;
      let g: number;
      if (j === 0) {
        t = seconds + rescale;
        g = k * t;
        choice[c] = -2;
      } else {
        t = (prevT[bestPrev] as number) + seconds + rescale;
        g = (prevG[bestPrev] as number) + k * (seconds + rescale);
        choice[c] = bestPrev;
        const keep = epoch.previousIndex[c] as number;
        if (keep >= 0) {
          const kt = (prevT[keep] as number) + seconds;
          const kg = (prevG[keep] as number) + k * seconds;
          const keepObj = timeWeight * kt + gpuWeight * kg;
          const switchObj = timeWeight * t + gpuWeight * g;
          if (!better(switchObj, tieOnTime ? t : g, keepObj, tieOnTime ? kt : kg)) {
            t = kt;
            g = kg;
            choice[c] = -1;
          }
        }
      }
      curT[c] = t;
      curG[c] = g;
    }
    from.push(choice);
    [prevT, curT] = [curT, prevT];
    [prevG, curG] = [curG, prevG];
    prevCount = count;
  }
  let best = 0;
  for (let c = 1; c < prevCount; c++) {
    const obj = timeWeight * (prevT[c] as number) + gpuWeight * (prevG[c] as number);
    const bObj = timeWeight * (prevT[best] as number) + gpuWeight * (prevG[best] as number);
    const tie = tieOnTime ? (prevT[c] as number) : (prevG[c] as number);
    const bTie = tieOnTime ? (prevT[best] as number) : (prevG[best] as number);
    if (better(obj, tie, bObj, bTie)) best = c;
  }
  const widths = new Array<number>(epochs.length);
  let index = best;
  for (let j = epochs.length - 1; j >= 0; j--) {
    const epoch = epochs[j] as CompiledEpoch;
    widths[j] = epoch.widths[index] as number;
    const choice = (from[j] as Int32Array)[index] as number;
    if (choice === -1) index = epoch.previousIndex[index] as number;
    else if (choice >= 0) index = choice;
  }
  return { widths, seconds: prevT[best] as number, gpuSeconds: prevG[best] as number };
}

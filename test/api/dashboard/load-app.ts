/**
 * The dashboard's scripts (src/api/dashboard, in the order of its scripts.ts, as the page loads them) in
 * one node:vm context with a minimal stand-in for the page: elements by id (innerHTML, textContent,
 * value, classes, listeners), sessionStorage, a fetch the test answers, and the real vega and vega-lite.
 * Fast checks of their functions with no browser; test/api/dashboard.test.ts runs the whole page in
 * Chromium.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { DASHBOARD_SCRIPTS } from '../../../src/api/dashboard/scripts.ts';

const DASHBOARD = join(import.meta.dirname, '../../../src/api/dashboard');

export class FakeElement {
  innerHTML = '';
  textContent = '';
  value = '';
  readonly classes = new Set<string>();
  readonly listeners = new Map<string, (event: { preventDefault(): void }) => unknown>();
  readonly classList = {
    add: (c: string) => void this.classes.add(c),
    remove: (c: string) => void this.classes.delete(c),
    contains: (c: string) => this.classes.has(c),
  };
  addEventListener(type: string, listener: (event: { preventDefault(): void }) => unknown) {
    this.listeners.set(type, listener);
  }
  /** Fires a listener as the browser would (a click, a submit). */
  fire(type: string) {
    return this.listeners.get(type)?.({ preventDefault() {} });
  }
}

export type FakeFetch = (
  path: string,
  init: { headers: Record<string, string>; signal?: AbortSignal },
) => Promise<Response>;

/** A call's time limit the page asked for (AbortSignal.timeout), which a test ends when it chooses. */
export interface CallTimeout {
  readonly ms: number;
  readonly expire: () => void;
}

export function loadDashboardScript(fetch: FakeFetch = () => Promise.reject(new Error('no fetch here'))) {
  const elements = new Map<string, FakeElement>();
  const element = (id: string) => {
    if (!elements.has(id)) elements.set(id, new FakeElement());
    return elements.get(id)!;
  };
  const storage = new Map<string, string>();
  const refreshes: Array<() => void> = [];
  const timeouts: CallTimeout[] = [];
  const context = vm.createContext({
    document: { getElementById: element },
    window: {},
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, String(v)),
      removeItem: (k: string) => void storage.delete(k),
    },
    fetch,
    // The page's 10 s refresh never fires by itself here: `refreshes` holds it for a test to call.
    setInterval: (fn: () => void) => refreshes.push(fn),
    clearInterval: () => {},
    // Nor do the calls' time limits run out by themselves: `timeouts` holds them.
    AbortSignal: {
      timeout: (ms: number) => {
        const controller = new AbortController();
        timeouts.push({
          ms,
          expire: () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
        });
        return controller.signal;
      },
    },
    vega,
    vegaLite,
  });
  // Top-level declarations of a script are visible to later scripts in the same context, as on the page.
  for (const name of DASHBOARD_SCRIPTS) {
    const file = join(DASHBOARD, name);
    vm.runInContext(readFileSync(file, 'utf8'), context, { filename: file });
  }
  const fns = vm.runInContext(
    '({ api, spendSpec, frontierSpec, spendSummary, frontierSummary, renderNumbers, renderTables, renderNodeList, renderResizes, renderHealth, renderActiveJobs, renderFailedJobs, refresh, start, keepTail, redrawn, describeJob })',
    context,
  );
  return { ...fns, element, storage, refreshes, timeouts } as {
    api(path: string, token: string): Promise<any>;
    spendSpec(ledger: any, budget: number | null): any;
    frontierSpec(frontier: any): any;
    spendSummary(ledger: any, budget: number | null): string;
    frontierSummary(frontier: any): string;
    renderNumbers(budget: any, plan: any, status: any, stopping?: any[], shownAtMost?: number): void;
    renderTables(plan: any, status: any): void;
    renderNodeList(view: any): void;
    renderResizes(resizes: any[]): void;
    renderHealth(status: any, now?: number): void;
    refresh(token: string): Promise<void>;
    renderActiveJobs(
      running: any[],
      waiting: any[],
      counts: any,
      queueOrder?: string,
      queued?: any[],
      stopping?: any[],
    ): void;
    renderFailedJobs(jobs: any[], total: number | undefined): void;
    start(token: string): Promise<void>;
    keepTail(text: string, max?: number): string;
    redrawn(text: string): string;
    describeJob(job: any): string;
    element(id: string): FakeElement;
    storage: Map<string, string>;
    refreshes: Array<() => void>;
    timeouts: CallTimeout[];
  };
}

/** A waiting cifar10 job as GET /v1/jobs lists it, with the fields a case sets (`waitingFor`, ...). */
export function listedJob(id: number, more: Record<string, unknown> = {}) {
  return {
    id,
    class: 'cifar10',
    state: 'waiting',
    width: 0,
    statEpoch: 0,
    restarts: 0,
    submittedAt: 0,
    ...more,
  };
}

/** Renders a Vega-Lite spec of the page to SVG in node, at a fixed width (the page's is its container's). */
export async function renderSpec(spec: any, width = 600): Promise<string> {
  const view = new vega.View(vega.parse(vegaLite.compile({ ...spec, width }).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

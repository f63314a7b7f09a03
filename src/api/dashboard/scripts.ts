/**
 * The dashboard's scripts (in src/api/dashboard), in the order the page loads them: classic scripts
 * sharing the page's global scope, each using what the ones before it define (its `global` comments say
 * which), so the order matters: app.js, which starts the page, comes last. The one list of them: the
 * route serves these (index.ts), the node test loader runs these (test/api/dashboard/load-app.ts), and a
 * test checks that page.html's script tags load these, in this order.
 */
export const DASHBOARD_SCRIPTS = [
  'format.js',
  'api.js',
  'charts.js',
  'numbers.js',
  'tables.js',
  'node-list.js',
  'failed-jobs.js',
  'job-state.js',
  'log-follow.js',
  'log-panel.js',
  'parts.js',
  'app.js',
] as const;

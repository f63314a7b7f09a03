// A worker's entry module must be JavaScript: on Node 20, `execArgv: ['--import', 'tsx']` does not apply
// tsx's loader to a TypeScript worker entry (ERR_UNKNOWN_FILE_EXTENSION). Register it, then load the worker.
import { register } from 'tsx/esm/api';

register();
await import('./compare-worker.ts');

#!/usr/bin/env node
// `npx boa`: the CLI is TypeScript, so register tsx's loader before loading it.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');

import { z } from 'zod';

/** A setting that must be a number above 0, its errors naming it. */
export const positive = (what: string) =>
  z.number({ error: `${what} must be a number` }).positive(`${what} must be > 0`);

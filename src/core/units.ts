// Its own module, with no imports: the CLI reads traces (trace.ts) and must not load the planner and
// its profile schema (zod, a third of the CLI's start-up) for one constant.
export const SECONDS_PER_HOUR = 3600;

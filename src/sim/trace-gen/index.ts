/** Synthetic workload traces: bursty arrivals of a chosen SCV, an application mix, real users' requests. */
export { appCounts, formatTraceCsv, generateTrace, type TraceSpec, TraceSpecError } from './generate.ts';
export { interarrivalSampler, type Sampler } from './interarrival.ts';
export { seededUniform, type Uniform } from './random.ts';
export { POLLUX_REQUESTS, type RequestTable } from './requests.ts';

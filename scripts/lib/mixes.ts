/** The BOA paper's large simulation trace mix ("newTrace", from the Sia paper), as fractions of jobs. */
export const NEW_TRACE_MIX: Readonly<Record<string, number>> = {
  cifar10: 0.5042,
  bert: 0.2167,
  deepspeech2: 0.2354,
  yolov3: 0.0475,
  imagenet: 0.0062,
};

export function ratesFromMix(
  mix: Readonly<Record<string, number>>,
  jobsPerHour: number,
): Record<string, number> {
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(mix).map(([app, share]) => [app, (jobsPerHour * share) / total]));
}

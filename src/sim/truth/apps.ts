/**
 * Per-application bounds from the data README (the values Pollux's simulator used).
 * They are facts about the measured jobs, so they live in code as typed constants.
 */
export interface AppSpec {
  readonly name: string;
  /** B0: the initial (smallest) total batch size; progress is counted in iterations at B0. */
  readonly initBatch: number;
  /** Largest total batch size the job may use. */
  readonly maxBatch: number;
  /** Per-GPU (atomic) batch size range. */
  readonly minLocalBsz: number;
  readonly maxLocalBsz: number;
  /** Data epochs (passes over the data set) after which the job is done. */
  readonly dataEpochs: number;
}

export const APP_NAMES = ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3'] as const;
export type AppName = (typeof APP_NAMES)[number];

export const APP_SPECS: Readonly<Record<AppName, AppSpec>> = {
  bert: { name: 'bert', initBatch: 12, maxBatch: 384, minLocalBsz: 4, maxLocalBsz: 12, dataEpochs: 2 },
  cifar10: {
    name: 'cifar10',
    initBatch: 128,
    maxBatch: 4096,
    minLocalBsz: 32,
    maxLocalBsz: 1024,
    dataEpochs: 100,
  },
  deepspeech2: {
    name: 'deepspeech2',
    initBatch: 20,
    maxBatch: 640,
    minLocalBsz: 10,
    maxLocalBsz: 80,
    dataEpochs: 80,
  },
  imagenet: {
    name: 'imagenet',
    initBatch: 200,
    maxBatch: 12800,
    minLocalBsz: 20,
    maxLocalBsz: 200,
    dataEpochs: 90,
  },
  ncf: { name: 'ncf', initBatch: 256, maxBatch: 32768, minLocalBsz: 32, maxLocalBsz: 32768, dataEpochs: 10 },
  // yolov3's traces measure local batch 16 too, but Pollux capped it at 8 (memory): keep 8.
  yolov3: { name: 'yolov3', initBatch: 8, maxBatch: 512, minLocalBsz: 4, maxLocalBsz: 8, dataEpochs: 50 },
};

export function isAppName(name: string): name is AppName {
  return (APP_NAMES as readonly string[]).includes(name);
}

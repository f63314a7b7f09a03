/**
 * Users' requests (num_replicas, batch_size) per application, as found in the 16 Pollux workloads
 * (workloads/ and workloads-realistic/: 2560 jobs sampled from Microsoft's Philly trace), with how many
 * jobs made each request. Generated jobs draw their request from their application's row in proportion
 * to these counts, so reservation baselines see the requests real users made.
 */
export type RequestTable = Readonly<
  Record<string, ReadonlyArray<readonly [replicas: number, batch: number, count: number]>>
>;

export const POLLUX_REQUESTS: RequestTable = {
  bert: [
    [1, 12, 84],
    [16, 384, 25],
    [6, 384, 23],
    [12, 384, 20],
    [8, 384, 18],
    [4, 48, 2],
  ],
  cifar10: [
    [1, 128, 487],
    [6, 2048, 134],
    [12, 4096, 133],
    [8, 2048, 119],
    [16, 4096, 109],
    [4, 512, 6],
    [8, 1024, 2],
  ],
  deepspeech2: [
    [1, 20, 105],
    [12, 640, 43],
    [8, 320, 34],
    [6, 320, 34],
    [4, 80, 4],
    [8, 160, 2],
  ],
  imagenet: [
    [8, 1600, 17],
    [32, 6400, 11],
    [24, 3200, 9],
    [48, 6400, 8],
    [16, 3200, 7],
  ],
  ncf: [
    [1, 32768, 503],
    [1, 256, 495],
    [4, 1024, 6],
    [8, 2048, 1],
    [2, 512, 1],
  ],
  yolov3: [
    [4, 64, 59],
    [1, 8, 28],
    [4, 32, 19],
    [8, 64, 7],
    [2, 16, 4],
    [16, 128, 1],
  ],
};

/**
 * A per-job column kept from one call to the next and grown when needed. Past about 16,000 jobs a JS
 * array of that many numbers is over V8's 128 KB limit for regular objects, and each one built a tick
 * was allocated in large-object space at 1-2 ms (bench:tick --jobs 20000, docs/benchmarks.md); a typed
 * array kept costs nothing after the first tick. What it holds is what the last call left: the caller
 * writes every element it reads, and nothing keeps a column past the call that asked for it.
 */
export class ReusedColumn<T extends Float64Array | Int32Array | Uint8Array> {
  #buffer: T;

  constructor(private readonly make: (length: number) => T) {
    this.#buffer = make(0);
  }

  /** The column for `length` jobs. */
  of(length: number): T {
    if (this.#buffer.length < length) this.#buffer = this.make(Math.max(length, 2 * this.#buffer.length));
    return this.#buffer.subarray(0, length) as T;
  }
}

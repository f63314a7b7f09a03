/**
 * Cloud node ids are strings, the executor's are numbers. Numbers are stable for the numbering's life (a
 * placement starts a new one past FORGET_NODES_PAST names, placement.ts) and translations are cached per
 * allocation array (arrays are replaced, never mutated).
 */
export class NodeNumbering {
  private readonly numbers = new Map<string, number>();
  private readonly names: string[] = [];
  private readonly toSlots = new WeakMap<readonly string[], number[]>();
  private readonly toNames = new WeakMap<readonly number[], readonly string[]>();

  get size(): number {
    return this.names.length;
  }

  number(id: string): number {
    let n = this.numbers.get(id);
    if (n === undefined) {
      n = this.names.length;
      this.numbers.set(id, n);
      this.names.push(id);
    }
    return n;
  }

  /** The number of a node id seen before, without numbering a new one. */
  peek(id: string): number | undefined {
    return this.numbers.get(id);
  }

  slots(allocation: readonly string[]): number[] {
    let slots = this.toSlots.get(allocation);
    if (!slots) {
      slots = allocation.map((id) => this.number(id));
      this.toSlots.set(allocation, slots);
    }
    return slots;
  }

  ids(slots: readonly number[]): readonly string[] {
    let ids = this.toNames.get(slots);
    if (!ids) {
      ids = slots.map((n) => this.names[n] as string);
      this.toNames.set(slots, ids);
      this.toSlots.set(ids, slots as number[]);
    }
    return ids;
  }
}

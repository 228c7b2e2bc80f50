// Steps the history owes later (a review's answer, the change it approved), each due at a record
// slot: a binary min-heap on (slot, order of scheduling), so that ties come out in a fixed order and
// the history stays a function of its seed. A heap, not a sorted array: a million-record history
// can hold hundreds of open reviews at once.

interface Entry<T> {
  slot: number;
  order: number;
  value: T;
}

export class FollowUps<T> {
  private readonly heap: Entry<T>[] = [];
  private scheduled = 0;

  get size(): number {
    return this.heap.length;
  }

  push(slot: number, value: T): void {
    const heap = this.heap;
    heap.push({ slot, order: this.scheduled++, value });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The earliest entry due at or before `slot`, removed; undefined when none is due yet. */
  popDue(slot: number): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined || top.slot > slot) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
        if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
        if (least === i) break;
        [heap[i], heap[least]] = [heap[least]!, heap[i]!];
        i = least;
      }
    }
    return top.value;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.slot < b.slot || (a.slot === b.slot && a.order < b.order);
}

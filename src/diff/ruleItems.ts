// The rules of one side of a rule edit as items, and the keys that pair old and new rules (by id; rules
// sharing an id paired by content): what the diff (./rules.ts) compares.
import { parseAuditRule } from "../api/fastParse.ts";
import type { AuditRule } from "../api/schemas.ts";
import { sameValue } from "./values.ts";

/**
 * One element of a rules list: validated on its own, so one malformed rule spoils nothing else. A class
 * (not an object literal with a getter per item): every item shares one shape, which the diff of each
 * rule edit reads in its hot loops.
 */
export class Item {
  /** The rule's id when it has a string one. */
  readonly id: string | null;
  /** Matches old and new rules (set by assignKeys). */
  key = "";
  /** The id is used by more than one rule on this side: said in the summary. */
  duplicate = false;
  // Validated only when read: most rules of an edit are unchanged and never need it.
  private parsed: AuditRule | null | undefined = undefined;

  constructor(
    readonly raw: unknown,
    /** 1-based. */
    readonly position: number,
  ) {
    const rawId = raw !== null && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined;
    this.id = typeof rawId === "string" ? rawId : null;
  }

  /** The rule when it has the expected shape; null: its fields are diffed generically. */
  get rule(): AuditRule | null {
    if (this.parsed === undefined) this.parsed = parseAuditRule(this.raw);
    return this.parsed;
  }
}

export function toItems(list: readonly unknown[]): Item[] {
  return list.map((raw, index) => new Item(raw, index + 1));
}

/** Every item has an id and no two share one (a short list, as rule lists are, compares pairs). */
function distinctIds(items: readonly Item[]): boolean {
  if (items.length > 32) {
    const ids = new Set(items.map((item) => item.id));
    return !ids.has(null) && ids.size === items.length;
  }
  for (let i = 0; i < items.length; i += 1) {
    const id = items[i]!.id;
    if (id === null) return false;
    for (let j = 0; j < i; j += 1) if (items[j]!.id === id) return false;
  }
  return true;
}

/**
 * Keys for matching old and new rules: the id (a rule without one: `#position`). Rules sharing an id
 * (malformed data) are paired identical content first, then in order; the rest are added or removed.
 */
export function assignKeys(oldItems: readonly Item[], newItems: readonly Item[]): void {
  // The common case, every rule with its own id on each side: the id is the key (what the groups below give).
  if (distinctIds(oldItems) && distinctIds(newItems)) {
    for (const item of oldItems) item.key = item.id!;
    for (const item of newItems) item.key = item.id!;
    return;
  }
  const base = (item: Item) => item.id ?? `#${item.position}`;
  const groups = new Map<string, { old: Item[]; new: Item[] }>();
  for (const [side, items] of [
    ["old", oldItems],
    ["new", newItems],
  ] as const) {
    for (const item of items) {
      const group = groups.get(base(item)) ?? { old: [], new: [] };
      group[side].push(item);
      groups.set(base(item), group);
    }
  }
  for (const [id, group] of groups) {
    const duplicate = group.old.length > 1 || group.new.length > 1;
    // Set in place: a copy would read (and so validate) every rule.
    const keyOf = (item: Item, key: string) => {
      item.key = key;
      item.duplicate = duplicate;
    };
    if (!duplicate) {
      for (const item of [...group.old, ...group.new]) keyOf(item, id);
      continue;
    }
    const freeOld = [...group.old];
    const freeNew: Item[] = [];
    let pair = 0;
    for (const item of group.new) {
      const same = freeOld.findIndex((o) => sameValue(o.raw, item.raw));
      if (same < 0) {
        freeNew.push(item);
        continue;
      }
      pair += 1;
      keyOf(freeOld[same]!, `${id}\u0000${pair}`);
      keyOf(item, `${id}\u0000${pair}`);
      freeOld.splice(same, 1);
    }
    for (let k = 0; k < Math.max(freeOld.length, freeNew.length); k++) {
      pair += 1;
      if (freeOld[k]) keyOf(freeOld[k]!, `${id}\u0000${pair}`);
      if (freeNew[k]) keyOf(freeNew[k]!, `${id}\u0000${pair}`);
    }
  }
}

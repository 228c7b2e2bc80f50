// Value helpers shared by the rule diff: deep equality, JSON paths, readable short renderings.
import { createRequire } from "node:module";
import type { diffWordsWithSpace } from "diff";
import { canonicalJson } from "../hash.ts";

/**
 * The word diff, loaded on first use (its CommonJS module alone): only a rule's return value that is
 * not JSON needs it, and a sync (a CLI process) that diffs no such value does not load the package's
 * modules (~20 ms of a sync's start).
 */
let wordDiff: typeof diffWordsWithSpace | undefined;
function diffWords(before: string, after: string): ReturnType<typeof diffWordsWithSpace> {
  wordDiff ??= (
    createRequire(import.meta.url)("diff/lib/diff/word.js") as {
      diffWordsWithSpace: typeof diffWordsWithSpace;
    }
  ).diffWordsWithSpace;
  return wordDiff(before, after);
}

/**
 * Equal as JSON: what canonicalJson would say, without writing either value out (the diff compares
 * every rule of every rule edit, most of them unchanged). Keys in any order; a key whose value JSON
 * leaves out (undefined, a function) counts as absent. Anything unusual (toJSON, non-finite numbers,
 * non-plain values) falls back to comparing the canonical texts.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ta = typeof a;
  if ((ta === "string" || ta === "boolean") && typeof b === ta) return false;
  // Two different numbers write different JSON, unless neither is finite (JSON writes both as null).
  if (ta === "number" && typeof b === "number") return !Number.isFinite(a) && !Number.isFinite(b);
  if (ta !== typeof b || ta !== "object" || a === null || b === null) return slowSame(a, b);
  if (Array.isArray(a)) {
    if (Array.isArray(b) && a.length !== b.length) return false;
    if (!Array.isArray(b)) return slowSame(a, b);
    for (let i = 0; i < a.length; i += 1) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a as object) || !isPlain(b as object)) return slowSame(a, b);
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let present = 0;
  for (const key in ra) {
    const value = ra[key];
    if (value === undefined || typeof value === "function") continue;
    if (!Object.hasOwn(rb, key) || !sameValue(value, rb[key])) return false;
    present += 1;
  }
  for (const key in rb) {
    const value = rb[key];
    if (value !== undefined && typeof value !== "function") present -= 1;
  }
  return present === 0;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function"
  );
}

function slowSame(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Whether `value` is what JSON.parse gives of its own JSON text (JSON.stringify's): plain objects with
 * own keys and dense plain arrays of strings, finite numbers other than -0, booleans and null. Such a
 * value diffs exactly as its stored text parsed does, so the diff can skip parsing it again.
 */
export function parsedLike(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== "object") return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.keys(value).length !== value.length)
      return false;
    for (const item of value) if (!parsedLike(item)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  const record = value as Record<string, unknown>;
  for (const key in record) if (!Object.hasOwn(record, key) || !parsedLike(record[key])) return false;
  return true;
}

/** What a rule_changes row stores: JSON text, so that 10 and "10" stay different; NULL for absent. */
export function encodeValue(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$`-less path suffix: `.color`, `[0]`, `["two words"]`. */
export function pathSuffix(path: readonly (string | number)[]): string {
  return path.map(pathPart).join("");
}

function pathPart(part: string | number): string {
  return typeof part === "number"
    ? `[${part}]`
    : IDENTIFIER.test(part)
      ? `.${part}`
      : `[${JSON.stringify(part)}]`;
}

const SHORT_LIMIT = 60;
const HEAD = 40;

/** Cuts a long text in the middle: both ends stay readable (a change is often at the end). */
function middle(text: string, limit = SHORT_LIMIT): string {
  if (text.length <= limit) return text;
  const head = Math.round((limit * HEAD) / SHORT_LIMIT);
  return `${text.slice(0, head)}…${text.slice(text.length - (limit - head - 1))}`;
}

/** A value as the one-line summary shows it: JSON, long ones shortened in the middle. */
export function shortValue(value: unknown): string {
  if (value === undefined) return "none";
  return middle(JSON.stringify(value) ?? String(value));
}

/** Unchanged text kept around each change of a text diff. */
const CONTEXT = 20;

/**
 * A word diff, `[-removed-]{+added+}` like `git diff --word-diff`, hunk by hunk: unchanged runs keep
 * CONTEXT characters next to each change and are cut between; changed runs are shown (long ones cut
 * in the middle), so the change is always visible whatever the texts' length.
 */
export function textDiff(before: string, after: string): string {
  const parts = diffWords(before, after);
  return parts
    .map((part, index) => {
      if (part.added) return `{+${middle(part.value, 4 * SHORT_LIMIT)}+}`;
      if (part.removed) return `[-${middle(part.value, 4 * SHORT_LIMIT)}-]`;
      const text = part.value;
      const first = index === 0;
      const last = index === parts.length - 1;
      if (first && text.length > CONTEXT) return `…${text.slice(-CONTEXT)}`;
      if (last && text.length > CONTEXT) return `${text.slice(0, CONTEXT)}…`;
      if (text.length > 2 * CONTEXT + 1) return `${text.slice(0, CONTEXT)}…${text.slice(-CONTEXT)}`;
      return text;
    })
    .join("");
}

export interface PathChange {
  /** Path below the compared value, e.g. `.color` or `[0].percent`; "" for the value itself. */
  path: string;
  oldValue: unknown;
  newValue: unknown;
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return value !== null && typeof value === "object";
}

/**
 * Changes between two values, by path when both are objects (or both arrays), else one change of the
 * whole value. Equal values give no change.
 */
export function pathChanges(oldValue: unknown, newValue: unknown): PathChange[] {
  if (sameValue(oldValue, newValue)) return [];
  if (isContainer(oldValue) && isContainer(newValue) && Array.isArray(oldValue) === Array.isArray(newValue)) {
    const changes: PathChange[] = [];
    walk(oldValue as Container, newValue as Container, "", [], changes);
    return changes;
  }
  return [{ path: "", oldValue, newValue }];
}

/** What microdiff compares by value rather than by its keys (its `richTypes`, looked up the same way). */
const RICH_TYPES: Record<string, boolean> = { Date: true, RegExp: true, String: true, Number: true };

type Container = Record<string, unknown>;

// microdiff's equality for two objects it does not enter: by string when the old one is not a number.
function looselyEqual(a: unknown, b: unknown): boolean {
  // biome-ignore lint/style/useTemplate: `+ ""` tries valueOf first, as microdiff does; a template does not.
  if (Number.isNaN(+(a as number))) return (a as string) + "" === (b as string) + "";
  return +(a as number) === +(b as number);
}

/**
 * microdiff 1.5's walk, change for change and in its order (its quirks kept: `in` sees inherited keys,
 * rich and boxed values compare by value, a value already on the path is not entered), with each
 * path written as text on the way down instead of arrays unshifted on the way up and the changes
 * mapped afterwards: this runs for every changed field of every rule of every config version.
 */
function walk(
  before: Container,
  after: Container,
  prefix: string,
  stack: unknown[],
  out: PathChange[],
): void {
  const beforeIsArray = Array.isArray(before);
  for (const key in before) {
    const oldValue = before[key];
    const path = prefix + pathPart(beforeIsArray ? +key : key);
    if (!(key in after)) {
      out.push({ path, oldValue, newValue: undefined });
      continue;
    }
    const newValue = after[key];
    const compatible =
      typeof oldValue === "object" &&
      typeof newValue === "object" &&
      Array.isArray(oldValue) === Array.isArray(newValue);
    if (
      oldValue &&
      newValue &&
      compatible &&
      !RICH_TYPES[Object.getPrototypeOf(oldValue)?.constructor?.name] &&
      !stack.includes(oldValue)
    ) {
      stack.push(oldValue);
      walk(oldValue as Container, newValue as Container, path, stack, out);
      stack.pop();
    } else if (
      oldValue !== newValue &&
      !(Number.isNaN(oldValue) && Number.isNaN(newValue)) &&
      !(compatible && looselyEqual(oldValue, newValue))
    ) {
      out.push({ path, oldValue, newValue });
    }
  }
  const afterIsArray = Array.isArray(after);
  for (const key in after) {
    if (!(key in before))
      out.push({
        path: prefix + pathPart(afterIsArray ? +key : key),
        oldValue: undefined,
        newValue: after[key],
      });
  }
}

/** `a → b`, `+b` (created) or `-a` (removed); two long texts as a text diff, so the change shows. */
export function arrow(change: { oldValue: unknown; newValue: unknown }): string {
  if (change.oldValue === undefined) return `+${shortValue(change.newValue)}`;
  if (change.newValue === undefined) return `-${shortValue(change.oldValue)}`;
  const { oldValue, newValue } = change;
  if (
    typeof oldValue === "string" &&
    typeof newValue === "string" &&
    Math.max(oldValue.length, newValue.length) > SHORT_LIMIT - 2
  ) {
    return JSON.stringify(textDiff(oldValue, newValue));
  }
  return `${shortValue(change.oldValue)} → ${shortValue(change.newValue)}`;
}

/** Multiset difference of two lists: what the new list gained and what it lost. */
export function listDelta(
  oldList: readonly unknown[],
  newList: readonly unknown[],
): { added: unknown[]; removed: unknown[] } {
  const remaining = oldList.map((value) => canonicalJson(value));
  const added: unknown[] = [];
  for (const value of newList) {
    const at = remaining.indexOf(canonicalJson(value));
    if (at >= 0) remaining[at] = "\u0000taken";
    else added.push(value);
  }
  const removed = oldList.filter((_, index) => remaining[index] !== "\u0000taken");
  return { added, removed };
}

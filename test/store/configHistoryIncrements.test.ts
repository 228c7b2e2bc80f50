// A config's edit links and version diffs after its history is read in increments (src/store/entityLinks.ts
// diffs only from the first version a read added on) equal those of the whole-history rebuild after every
// read (what each read stored before) and those of one read of the whole history, on both engines: new
// versions appended, older ones arriving after newer ones, a gap filled later, a read adding nothing, a
// revision of a known version, config edits arriving between reads, and a version received with a value
// its stored JSON text leaves out.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VERSIONED_CONFIG_EDITS } from "../../src/api/entityActions.ts";
import { CONFIG_DIFF_VERSION } from "../../src/diff/configHistory.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import {
  linkAndDiffConfig,
  openStore,
  rediffConfigsBehind,
  type Store,
  type VersionInput,
} from "../../src/store/syncStore.ts";
import { storeConfigVersions } from "../../src/sync/entityChanges.ts";
import { freshDatabase } from "../pg/cluster.ts";
import { copyStore } from "../pg/copyStore.ts";
import { insertRecords, makeRecord } from "../report/fixtures.ts";

const KEY = "limits";
const T0 = Date.UTC(2025, 2, 3, 9, 0, 0);
const LAST = 30;
const ctx = { runId: null, now: T0 };

// Versions 8 and 9 share a second and a modifier (a tie the link rule pairs in order).
const at = (n: number) => T0 + (n === 9 ? 8 : n) * 10_000 + (n === 9 ? 600 : 300);
const who = (n: number) => (n === 9 ? "u2" : `u${n % 3}`);

/** Version n of the config: rules added, removed, reordered and modified, defaultValue paths, whole fields. */
function version(n: number, extra: Record<string, unknown> = {}): VersionInput {
  const rules = Array.from({ length: 1 + (n % 4) }, (_, r) => ({
    id: `rule_${(r + Math.floor(n / 7)) % 5}`,
    name: `Rule ${r}`,
    passPercentage: (n * 13 + r) % 101,
    conditions: [{ type: "country", targetValue: [`c${n % 3}`], operator: "any" }],
    returnValue: { limit: n % 2 === 0 ? r : 10 },
  }));
  const raw = {
    id: "cfg_limits",
    name: KEY,
    version: n,
    lastModifiedTime: at(n),
    lastModifierID: who(n),
    description: `edit ${n % 4}`,
    isEnabled: n % 3 !== 0,
    defaultValue: { limit: n % 5, regions: n % 2 === 1 ? ["eu"] : ["eu", "us"] },
    rules: n % 10 === 5 ? [...rules].reverse() : rules,
    // Not what JSON gives back: an undefined value, which its stored text leaves out.
    ...(n === 25
      ? { rules: rules.map((rule) => ({ ...rule, returnValue: { ...rule.returnValue, note: undefined } })) }
      : {}),
    tags: n % 6 === 0 ? ["a"] : ["a", "b"],
    ...extra,
  };
  return {
    configId: "cfg_limits",
    version: n,
    lastModifiedTime: at(n),
    lastModifierId: who(n),
    lastModifierName: null,
    raw,
  };
}

/** The config edits that made the versions (none for version 4; one with no version), oldest first. */
function edits(from: number, to: number) {
  const records = [];
  for (let n = from; n <= to; n++) {
    if (n === 4) continue;
    const type = VERSIONED_CONFIG_EDITS[n % VERSIONED_CONFIG_EDITS.length]!;
    const second = Math.floor(at(n) / 1000) * 1000;
    records.push(
      makeRecord({ id: `edit_${n}`, at: second, actionType: type, name: KEY, updatedByUserID: who(n) }),
    );
  }
  if (from === 1)
    records.push(
      makeRecord({ id: "edit_orphan", at: T0 + 5_000, actionType: VERSIONED_CONFIG_EDITS[0]!, name: KEY }),
    );
  return records;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The reads, in order, each as the server lists versions (newest first), and when the second half of the edits arrives. */
const READS: { versions: VersionInput[]; thenEdits?: true }[] = [
  { versions: range(3, 12).map((n) => version(n)) },
  // Older than everything stored: the diff of 3 (against nothing before) now has 2 before it.
  { versions: [version(2), version(1)] },
  {
    versions: range(13, 20)
      .filter((n) => n !== 16)
      .map((n) => version(n)),
    thenEdits: true,
  },
  // Nothing new: the links follow the edits that arrived, the diffs stay.
  { versions: [version(20), version(19)] },
  // The gap filled with newer versions: 16 diffed against 15, and 17 again against 16.
  { versions: [...range(21, LAST), 16].map((n) => version(n)) },
  // A known number with other content: a revision, which no diff reads.
  { versions: [version(5, { description: "rewritten" })] },
];

interface Derived {
  links: unknown[];
  changes: unknown[];
}

/** The derived rows of the config: links in id order, version changes in the order they were written. */
async function derived(store: Store): Promise<Derived> {
  const q = await queriesOf(store);
  const links = await q.all<{ audit_log_id: string }>(
    sql`SELECT audit_log_id, config_key, version FROM config_edit_links WHERE config_key = ${KEY}`,
  );
  const changes = await q.all(
    sql`SELECT config_key, version, previous_version, field, path, change, old_value, new_value
        FROM config_version_changes WHERE config_key = ${KEY} ORDER BY id`,
  );
  return { links: links.sort((a, b) => (a.audit_log_id < b.audit_log_id ? -1 : 1)), changes };
}

const ENGINES = ["sqlite", "postgres"] as const;
const opened: Store[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

/** A store holding the edits `edits(1, upTo)`, on the engine. */
async function storeWithEdits(engine: (typeof ENGINES)[number], upTo: number): Promise<Store> {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-increments-")), "store.db");
  const sqlite = await openStore(path);
  insertRecords(sqlite as never, edits(1, upTo));
  if (engine === "sqlite") {
    opened.push(sqlite);
    return sqlite;
  }
  await sqlite.close();
  const url = await freshDatabase("increments");
  await copyStore(path, url);
  const store = await openStore(url);
  opened.push(store);
  return store;
}

describe.each(ENGINES)("a config's history read in increments (%s)", (engine) => {
  it("stores the links and diffs of the whole-history rebuild after every read, and of one read of it all", async () => {
    // SQLite: half the edits first, the rest between two reads; PostgreSQL: all of them first (a copy).
    const late = engine === "sqlite";
    const firstEdits = late ? 12 : LAST;
    const increments = await storeWithEdits(engine, firstEdits);
    const rebuilt = await storeWithEdits(engine, firstEdits);
    for (const [index, read] of READS.entries()) {
      await storeConfigVersions(increments, KEY, read.versions, ctx);
      await storeConfigVersions(rebuilt, KEY, read.versions, ctx);
      // What every read stored before: the whole history linked and diffed again.
      await linkAndDiffConfig(rebuilt, KEY);
      expect(await derived(increments), `after read ${index + 1}`).toEqual(await derived(rebuilt));
      if (late && read.thenEdits)
        for (const store of [increments, rebuilt]) insertRecords(store as never, edits(firstEdits + 1, LAST));
    }
    const final = await derived(increments);
    expect(final.links.length).toBe(LAST - 1);
    // Every version but the first has at least one change.
    expect(new Set(final.changes.map((c) => (c as { version: number }).version)).size).toBe(LAST - 1);

    const whole = await storeWithEdits(engine, LAST);
    await storeConfigVersions(
      whole,
      KEY,
      range(1, LAST)
        .map((n) => version(n))
        .reverse(),
      ctx,
    );
    expect(final).toEqual(await derived(whole));
  });
});

describe("a store whose version diffs an older CONFIG_DIFF_VERSION derived", () => {
  it("derives every config's rows again whole, once, and records the number", async () => {
    const store = await storeWithEdits("sqlite", LAST);
    await storeConfigVersions(
      store,
      KEY,
      range(1, LAST).map((n) => version(n)),
      ctx,
    );
    const expected = await derived(store);
    const q = await queriesOf(store);
    // Rows a read would keep but an older diff derived differently: gone, and one altered.
    await q.run(sql`DELETE FROM config_version_changes WHERE config_key = ${KEY} AND version < 10`);
    await q.run(sql`UPDATE config_version_changes SET new_value = 'stale' WHERE config_key = ${KEY}`);
    // Absent, the number is 1 (the rows this code derives): nothing to do.
    expect(await rediffConfigsBehind(store)).toBe(0);
    expect(await derived(store)).not.toEqual(expected);
    await q.run(sql`INSERT INTO meta (key, value, updated_at) VALUES ('config_diff_version', '0', 0)`);
    // A run stopped before its pass: nothing derived, nothing recorded (the next run does it all).
    expect(await rediffConfigsBehind(store, AbortSignal.abort())).toBe(0);
    expect(await derived(store)).not.toEqual(expected);
    expect(await rediffConfigsBehind(store)).toBe(1);
    expect(await derived(store)).toEqual(expected);
    const meta = await q.get<{ value: string }>(
      sql`SELECT value FROM meta WHERE key = 'config_diff_version'`,
    );
    expect(meta?.value).toBe(String(CONFIG_DIFF_VERSION));
    expect(await rediffConfigsBehind(store)).toBe(0);
  });
});

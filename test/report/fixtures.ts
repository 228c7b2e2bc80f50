import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// Test fixture: builds audit log records shaped like the specification's example and inserts them
// the way the sync's writer does (seq order, record_hash of the raw record, chain_hash linked from
// CHAIN_GENESIS), without depending on the sync code.
import { CHAIN_GENESIS, chainLink, recordHash } from "../../src/hash.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { storeRuleDiffs } from "../helpers/storeFixtures.ts";

export type RawRecord = Record<string, unknown> & { id: string };

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** `date`/`time` texts as the service writes them (Date#toDateString / toTimeString in UTC). */
export function auditTimeTexts(epochMs: number): { date: string; time: string } {
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  return {
    date: `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()}`,
    time: `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`,
  };
}

let counter = 0;
/** A 22-character id, deterministic per test run. */
export function fixtureId(prefix = "r"): string {
  counter += 1;
  return `${prefix}${String(counter).padStart(22 - prefix.length, "0")}`;
}

export function makeRecord(
  fields: Partial<RawRecord> & { at: number; actionType: string; name: string },
): RawRecord {
  const { at, ...rest } = fields;
  return {
    id: rest.id ?? fixtureId(),
    changeLog: "",
    updatedBy: "Jane Doe",
    updatedByUserID: "4eoDlYj7svJixZfDsYSn",
    modifierEmail: "jane@example.com",
    changes: {},
    tags: [],
    ...auditTimeTexts(at),
    ...rest,
  } as RawRecord;
}

/** Inserts records after the current chain head; returns the seq of each. */
export function insertRecords(store: Store, records: readonly RawRecord[], firstSeenAt = 0): number[] {
  const head = sqliteOf(store)
    .prepare("SELECT seq, chain_hash AS hash FROM audit_logs ORDER BY seq DESC LIMIT 1")
    .get() as { seq: number; hash: string } | undefined;
  let seq = head?.seq ?? 0;
  let chain = head?.hash ?? CHAIN_GENESIS;
  const insert = sqliteOf(store).prepare(
    `INSERT INTO audit_logs (raw_data, occurred_at, server_day, record_hash_bytes, seq, chain_hash_bytes,
       first_seen_at)
     VALUES (?, ?, ?, unhex(?), ?, unhex(?), ?)`,
  );
  const seqs: number[] = [];
  sqliteOf(store).transaction(() => {
    for (const record of records) {
      const date = String(record.date);
      const time = String(record.time);
      const occurredAt = Date.parse(`${date} ${time.split(" (")[0]}`);
      const day = new Date(occurredAt).toISOString().slice(0, 10);
      const hash = recordHash(record);
      seq += 1;
      chain = chainLink(chain, hash);
      insert.run(
        JSON.stringify(record),
        Number.isNaN(occurredAt) ? null : occurredAt,
        Number.isNaN(occurredAt) ? null : day,
        hash,
        seq,
        chain,
        firstSeenAt,
      );
      seqs.push(seq);
    }
  })();
  return seqs;
}

/**
 * insertRecords, then each record's rule diff, as the sync's insert hook stores it with the record. A
 * report reads the diffs the store holds; it computes none.
 */
export function insertSyncedRecords(store: Store, records: readonly RawRecord[], firstSeenAt = 0): number[] {
  const seqs = insertRecords(store, records, firstSeenAt);
  for (const record of records) storeRuleDiffs(store, record.id, record.changes ?? {});
  return seqs;
}

/** The first rule of the OpenAPI example of GET /console/v1/audit_logs. */
export function exampleRule(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    groupName: "test",
    percentagePass: 100,
    conditionJSON: [{ conditionType: 1, operator: 0, value: ["1"], extraConfig: {} }],
    returnValueJSON: "true",
    id: "BfGswoMDcsZ4y9Le1d9O",
    salt: "8df8n90p-d9bj-1l23-c9bl-1m022n9bzps8",
    environment: "production",
    rollouts: [],
    enabledEnvironments: ["development", "staging", "production"],
    ...overrides,
  };
}

/** The compliance Markdown of June 2024 (UTC, fixed clock) over a fresh in-memory store of `records`. */
export async function juneComplianceMarkdown(records: readonly RawRecord[]): Promise<string> {
  const store = openStore(":memory:");
  try {
    insertSyncedRecords(store, records);
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-june-"));
    await writeReports({
      store,
      from: "2024-06-01",
      to: "2024-06-30",
      outDir,
      formats: ["md"],
      generatedAt: 0,
    });
    return readFileSync(join(outDir, "compliance_2024-06-01_2024-06-30.md"), "utf8");
  } finally {
    store.close();
  }
}

/** One `###` section of a compliance Markdown, up to its query. */
export function markdownSection(md: string, heading: string): string {
  const start = md.indexOf(`### ${heading}`);
  return md.slice(start, md.indexOf("<details>", start));
}

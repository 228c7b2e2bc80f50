// What `flagtrail verify` reads from a PostgreSQL store (src/store/chainRead.ts on SQLite): everything in
// ONE REPEATABLE READ, READ ONLY transaction on one session, so a sync committing meanwhile changes
// nothing verify sees. Long tables are read in key order a batch at a time (keyset pages inside the same
// snapshot), so memory stays bounded; text keys sort with COLLATE "C", SQLite's byte order, because the
// digests fold rows in that order.
import type pg from "pg";
import {
  CHAIN_META_KEYS,
  type ChainMeta,
  type ChainReader,
  type ChainRecord,
  chainMetaFrom,
  type RevisionRow,
  type StoredRuleChange,
} from "../chainRead.ts";
import { COVERAGE_COLUMNS, type CoverageRow, QUARANTINE_COLUMNS, type QuarantineRow } from "../digests.ts";
import type { PgStore } from "./connection.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";

const BATCH_ROWS = 1000;

/** Rows of `select` (which ends in `WHERE <key> > $1 ORDER BY <key> LIMIT $2`) in key order, a page at a time. */
export async function* keyset<T extends Record<string, unknown>>(
  client: pg.ClientBase,
  select: string,
  key: keyof T,
): AsyncGenerator<T[]> {
  let after: unknown = -1;
  for (;;) {
    const page = (await client.query<T>(select, [after, BATCH_ROWS])).rows;
    if (page.length === 0) return;
    yield page;
    if (page.length < BATCH_ROWS) return;
    after = page[page.length - 1]![key];
  }
}

export async function* flat<T>(pages: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const page of pages) yield* page;
}

async function metaOf(client: pg.ClientBase): Promise<ChainMeta> {
  const { rows } = await client.query<{ key: string; value: string }>(
    "SELECT key, value FROM meta WHERE key = ANY($1)",
    [[...CHAIN_META_KEYS]],
  );
  return chainMetaFrom(rows);
}

async function* recordsOf(client: pg.ClientBase): AsyncGenerator<ChainRecord> {
  const pages = keyset<Omit<ChainRecord, "ruleChanges">>(
    client,
    `SELECT seq, id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
            date_text, time_text, tags, changes, raw, record_hash, chain_hash, occurred_at, server_day,
            s.summary, s.diff_version
     FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
     WHERE seq > $1 ORDER BY seq LIMIT $2`,
    "seq",
  );
  for await (const page of pages) {
    // One query for the page's rule diffs, in rule_changes id order as SQLite reads them per record.
    const changes = await client.query<StoredRuleChange & { audit_log_id: string }>(
      `SELECT audit_log_id, rule_id, rule_name, change, field, old_value, new_value, old_position, new_position
       FROM rule_changes WHERE audit_log_id = ANY($1) ORDER BY id`,
      [page.map((r) => r.id)],
    );
    const byRecord = new Map<string, StoredRuleChange[]>();
    for (const { audit_log_id, ...change } of changes.rows) {
      const list = byRecord.get(audit_log_id) ?? [];
      list.push(change);
      byRecord.set(audit_log_id, list);
    }
    for (const row of page) yield { ...row, ruleChanges: byRecord.get(row.id) ?? [] };
  }
}

function readerOf(client: pg.ClientBase): ChainReader {
  return {
    meta: () => metaOf(client),
    records: () => recordsOf(client),
    revisions: () =>
      flat(
        keyset<RevisionRow & Record<string, unknown>>(
          client,
          "SELECT id, audit_log_id, raw, record_hash FROM audit_log_revisions WHERE id > $1 ORDER BY id LIMIT $2",
          "id",
        ),
      ),
    quarantine: () =>
      flat(
        keyset<QuarantineRow & Record<string, unknown>>(
          client,
          `SELECT ${QUARANTINE_COLUMNS} FROM quarantine WHERE id > $1 ORDER BY id LIMIT $2`,
          "id",
        ),
      ),
    // One row per filter set and day: small enough to read at once.
    coverage: async function* () {
      const rows = await client.query<CoverageRow>(
        `SELECT ${COVERAGE_COLUMNS} FROM coverage ORDER BY filter_key COLLATE "C", day COLLATE "C"`,
      );
      yield* rows.rows;
    },
    chainHashAt: async (seq) =>
      (await client.query<{ chain_hash: string }>("SELECT chain_hash FROM audit_logs WHERE seq = $1", [seq]))
        .rows[0]?.chain_hash ?? null,
  };
}

/** readChainSnapshot for PostgreSQL: `read` runs against one snapshot, then the transaction ends. */
export async function readPgChainSnapshot<T>(
  store: PgStore,
  read: (reader: ChainReader) => Promise<T>,
): Promise<T> {
  return inPgReadSnapshot(store, (client) => read(readerOf(client)));
}

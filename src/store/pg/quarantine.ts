// Quarantine and small meta values on PostgreSQL, inside a write transaction's session: shared by the
// record writer (audit records that fail their schema) and the entity writer (entity items that do).
// The digest is folded by the same functions as on SQLite (src/store/digests.ts), so verify reads one
// rule on both engines.
import type pg from "pg";
import {
  COVERAGE_COLUMNS,
  COVERAGE_DIGEST_KEY,
  type CoverageDigest,
  type CoverageRow,
  EMPTY_COVERAGE_DIGEST,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRow,
  foldQuarantineRow,
  parseDigest,
  QUARANTINE_COLUMNS,
  QUARANTINE_DIGEST_KEY,
  type QuarantineDigest,
  type QuarantineRow,
  quarantineDigestSchema,
} from "../digests.ts";
import type { QuarantineInsert } from "../quarantineRows.ts";

export async function readPgMeta(client: pg.ClientBase, key: string): Promise<string | undefined> {
  const result = await client.query<{ value: string }>("SELECT value FROM meta WHERE key = $1", [key]);
  return result.rows[0]?.value;
}

export async function writePgMeta(
  client: pg.ClientBase,
  key: string,
  value: string,
  now: number = Date.now(),
): Promise<void> {
  await client.query(
    `INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    [key, value, now],
  );
}

/** Inserts one quarantined item unless its raw hash is there already; returns whether it was new. */
export async function insertPgQuarantine(client: pg.ClientBase, row: QuarantineInsert): Promise<boolean> {
  const result = await client.query(
    `INSERT INTO quarantine (record_id, raw, raw_hash, issues, request_path, received_at, sync_run_id,
       server_day, day_min, day_max)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (raw_hash) DO NOTHING`,
    [
      row.recordId,
      row.raw,
      row.rawHash,
      row.issues,
      row.requestPath,
      row.receivedAt,
      row.syncRunId,
      row.serverDay,
      row.dayMin,
      row.dayMax,
    ],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Folds quarantine rows added since the last call into meta QUARANTINE_DIGEST_KEY (as SQLite's). */
export async function updatePgQuarantineDigest(client: pg.ClientBase): Promise<QuarantineDigest> {
  // A missing (or unreadable) digest starts over from every row present.
  let state =
    parseDigest(quarantineDigestSchema, await readPgMeta(client, QUARANTINE_DIGEST_KEY)) ??
    EMPTY_QUARANTINE_DIGEST;
  const rows = await client.query<QuarantineRow>(
    `SELECT ${QUARANTINE_COLUMNS} FROM quarantine WHERE id > $1 ORDER BY id`,
    [state.lastId],
  );
  for (const row of rows.rows) state = foldQuarantineRow(state, row);
  await writePgMeta(client, QUARANTINE_DIGEST_KEY, JSON.stringify(state));
  // With it the coverage digest, so a store any writer touched holds both (verify: missing = removed).
  if ((await readPgMeta(client, COVERAGE_DIGEST_KEY)) === undefined) await updatePgCoverageDigest(client);
  return state;
}

/** Recomputes meta COVERAGE_DIGEST_KEY from every coverage row, as SQLite's updateCoverageDigest. */
export async function updatePgCoverageDigest(client: pg.ClientBase): Promise<CoverageDigest> {
  let state = EMPTY_COVERAGE_DIGEST;
  const { rows } = await client.query<CoverageRow>(
    `SELECT ${COVERAGE_COLUMNS} FROM coverage ORDER BY filter_key COLLATE "C", day COLLATE "C"`,
  );
  for (const row of rows) state = foldCoverageRow(state, row);
  await writePgMeta(client, COVERAGE_DIGEST_KEY, JSON.stringify(state));
  return state;
}

// Meta values, quarantine rows and digests for the PostgreSQL record writer (src/store/pg/writes.ts,
// syncBatch.ts), which still hands a session's client around: each is the one query text of
// src/store/metaValues.ts or digests.ts on that client. To go when that writer takes Queries (issue 22).
import type pg from "pg";
import type { QuarantineDigest } from "../digests.ts";
import { insertQuarantineIn, updateQuarantineDigestIn } from "../digests.ts";
import { writeMetaValueQuery } from "../metaValues.ts";
import type { QuarantineInsert } from "../quarantineRows.ts";
import { pgClientQueries } from "./queries.ts";

export async function writePgMeta(
  client: pg.ClientBase,
  key: string,
  value: string,
  now: number = Date.now(),
): Promise<void> {
  await pgClientQueries(client).run(writeMetaValueQuery(key, value, now));
}

export function insertPgQuarantine(client: pg.ClientBase, row: QuarantineInsert): Promise<boolean> {
  return insertQuarantineIn(pgClientQueries(client), row);
}

export function updatePgQuarantineDigest(client: pg.ClientBase): Promise<QuarantineDigest> {
  return updateQuarantineDigestIn(pgClientQueries(client));
}

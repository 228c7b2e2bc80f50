// `flagtrail verify`'s store half: re-walk the hash chain in seq order. Each record's hash is
// recomputed from its raw JSON, each link from the previous one, and the columns the writer copies
// out of the raw record are compared with it, so a row edited in any column is caught. The first
// broken link is named (seq, id, what differs).
import type Database from "better-sqlite3";
import { IntegrityError } from "../errors.ts";
import { CHAIN_GENESIS, canonicalJson, chainLink, recordHash } from "../store/hash.ts";
import { CHAIN_HEAD_HASH_KEY, CHAIN_HEAD_SEQ_KEY } from "../store/writes.ts";

export interface ChainCheck {
  records: number;
  head: { seq: number; chainHash: string } | null;
}

interface Row {
  seq: number;
  id: string;
  name: string;
  action_type: string;
  change_log: string | null;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  date_text: string;
  time_text: string;
  tags: string | null;
  changes: string;
  raw: string;
  record_hash: string;
  chain_hash: string;
}

function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
}

/** Canonical JSON of a column holding JSON text, or the text itself if it is not JSON. */
function canonicalText(text: string | null): string | null {
  if (text === null) return null;
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}

/** The first column whose value is not what the writer derives from the raw record, if any. */
function columnMismatch(row: Row, raw: Record<string, unknown>): string | null {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  const direct: [string, unknown, unknown][] = [
    ["id", row.id, raw.id],
    ["name", row.name, raw.name],
    ["action_type", row.action_type, raw.actionType],
    ["change_log", row.change_log, text(raw.changeLog)],
    ["updated_by", row.updated_by, text(raw.updatedBy)],
    ["updated_by_user_id", row.updated_by_user_id, text(raw.updatedByUserID)],
    ["date_text", row.date_text, raw.date],
    ["time_text", row.time_text, raw.time],
  ];
  for (const [column, stored, expected] of direct) {
    if (stored !== expected) return column;
  }
  const email = raw.modifierEmail;
  const expectedEmail =
    email === undefined || email === null ? null : typeof email === "string" ? email : canonicalJson(email);
  const storedEmail =
    row.modifier_email !== null && typeof email === "object" && email !== null
      ? canonicalText(row.modifier_email)
      : row.modifier_email;
  if (storedEmail !== expectedEmail) return "modifier_email";
  if (canonicalText(row.changes) !== canonicalJson(raw.changes ?? {})) return "changes";
  const expectedTags = raw.tags === undefined || raw.tags === null ? null : canonicalJson(raw.tags);
  if (canonicalText(row.tags) !== expectedTags) return "tags";
  return null;
}

export function verifyChain(sqlite: Database.Database): ChainCheck {
  const rows = sqlite
    .prepare(
      `SELECT seq, id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
              date_text, time_text, tags, changes, raw, record_hash, chain_hash
       FROM audit_logs ORDER BY seq`,
    )
    .iterate() as IterableIterator<Row>;
  let previous = CHAIN_GENESIS;
  let expectedSeq = 1;
  let records = 0;
  let head: ChainCheck["head"] = null;
  for (const row of rows) {
    const where = `seq ${row.seq} (id ${row.id})`;
    if (row.seq !== expectedSeq) {
      throw new IntegrityError(
        `broken chain at ${where}: expected seq ${expectedSeq} next; records ${expectedSeq}..${row.seq - 1} are missing`,
      );
    }
    let raw: unknown;
    try {
      raw = JSON.parse(row.raw);
    } catch {
      throw new IntegrityError(`broken chain at ${where}: the raw record is not valid JSON`);
    }
    const computed = recordHash(raw);
    if (computed !== row.record_hash) {
      throw new IntegrityError(
        `broken chain at ${where}: record_hash ${short(row.record_hash)} differs from the hash of its raw record ${short(computed)}`,
      );
    }
    const link = chainLink(previous, row.record_hash);
    if (link !== row.chain_hash) {
      throw new IntegrityError(
        `broken chain at ${where}: chain_hash ${short(row.chain_hash)} differs from the link computed from the previous record ${short(link)}`,
      );
    }
    const column =
      raw !== null && typeof raw === "object" ? columnMismatch(row, raw as Record<string, unknown>) : "raw";
    if (column !== null) {
      throw new IntegrityError(`broken chain at ${where}: column ${column} differs from the raw record`);
    }
    previous = link;
    records += 1;
    expectedSeq += 1;
    head = { seq: row.seq, chainHash: row.chain_hash };
  }

  // The writer mirrors the head in meta: records cut off the end of the chain show up here.
  const meta = new Map(
    (
      sqlite
        .prepare("SELECT key, value FROM meta WHERE key IN (?, ?)")
        .all(CHAIN_HEAD_SEQ_KEY, CHAIN_HEAD_HASH_KEY) as { key: string; value: string }[]
    ).map((r) => [r.key, r.value]),
  );
  const metaSeq = meta.get(CHAIN_HEAD_SEQ_KEY);
  const metaHash = meta.get(CHAIN_HEAD_HASH_KEY);
  if (metaSeq !== undefined && metaHash !== undefined) {
    if (Number(metaSeq) !== (head?.seq ?? 0) || metaHash !== (head?.chainHash ?? CHAIN_GENESIS)) {
      throw new IntegrityError(
        `the chain head recorded in meta (seq ${metaSeq}, ${short(metaHash)}) is not the last stored record ` +
          `(${head ? `seq ${head.seq}, ${short(head.chainHash)}` : "no records"}): records were removed from or added to the end`,
      );
    }
  }
  return { records, head };
}

/** A report's chain head must still be in the store, unchanged (the store only grows). */
export function assertChainContains(
  sqlite: Database.Database,
  head: { seq: number; chainHash: string },
): void {
  const stored = sqlite.prepare("SELECT chain_hash FROM audit_logs WHERE seq = ?").pluck().get(head.seq) as
    | string
    | undefined;
  if (stored !== head.chainHash) {
    throw new IntegrityError(
      `the manifest's chain head (seq ${head.seq}, ${short(head.chainHash)}) is not in the store ` +
        `(${stored === undefined ? "no record at that seq" : `found ${short(stored)}`})`,
    );
  }
}

// What `flagtrail verify` reads, in ONE read snapshot (meta head, records and digests of the same moment,
// whatever a sync commits). Text keys sort COLLATE "binary": the digests fold rows in byte order.
import { checkCoverageBeforeWrite, checkQuarantineEnd, type StateBeforeWrite } from "../chainChecks.ts";
import { type CoverageRow, foldCoverageRows, type QuarantineRow } from "../digests.ts";
import { CHAIN_HEAD_HASH_KEY, CHAIN_HEAD_SEQ_KEY } from "../records/pageTally.ts";
import { pagesOf, rowsOf } from "./dialect.ts";
import {
  CHAIN_HEAD_SIGNATURE_KEY,
  CHAIN_HEAD_SIGNED_SEQ_KEY,
  COVERAGE_DIGEST_KEY,
  COVERAGE_ROWS,
  QUARANTINE_COLUMNS,
  QUARANTINE_DIGEST_KEY,
} from "./digests.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inReadSnapshot, type Queries, sql } from "./query.ts";
import { BACKFILL_MARK_KEY, orphanRuleDiffsIn, parseBackfillMark } from "./ruleDiffs.ts";

export interface StoredRuleChange {
  rule_id: string;
  rule_name: string | null;
  change: string;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

// The columns PostgreSQL's writer copies out of the raw record; SQLite's are computed from it, so are not
// read (~40 % of verify's reading). `changes` is generated on both engines and never read.
export interface CopiedColumns {
  name: string;
  action_type: string;
  change_log: string | null;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  date_text: string;
  time_text: string;
  tags: string | null;
}

/** One audit_logs row with its stored rule diff (summary and rule_changes rows). */
export interface ChainRecord extends Partial<CopiedColumns> {
  seq: number;
  id: string;
  raw: string;
  record_hash: string;
  chain_hash: string;
  occurred_at: number | null;
  server_day: string | null;
  summary: string | null;
  diff_version: number | null;
  ruleChanges: StoredRuleChange[];
}

/** What the store keeps about its chain in `meta`, as stored (verify parses and judges it; null: not stored). */
export type ChainMeta = Awaited<ReturnType<typeof metaOf>>;

/** meta's chain keys and the quarantine's last id, in one round trip (a row even when meta holds none). */
async function metaOf(q: Queries) {
  const rows = await q.all<{ key: string | null; value: string | null; quarantine_last: number | null }>(
    sql`SELECT m.key, m.value, (SELECT max(id) FROM quarantine) AS quarantine_last
        FROM (SELECT 1 AS one) AS o LEFT JOIN meta m ON m.key IN ${inList([
          CHAIN_HEAD_SEQ_KEY,
          CHAIN_HEAD_HASH_KEY,
          CHAIN_HEAD_SIGNATURE_KEY,
          CHAIN_HEAD_SIGNED_SEQ_KEY,
          QUARANTINE_DIGEST_KEY,
          COVERAGE_DIGEST_KEY,
          BACKFILL_MARK_KEY,
        ])}`,
  );
  const meta = new Map(rows.map((r) => [r.key, r.value ?? undefined]));
  return {
    headSeq: meta.get(CHAIN_HEAD_SEQ_KEY) ?? null,
    headHash: meta.get(CHAIN_HEAD_HASH_KEY) ?? null,
    headSignature: meta.get(CHAIN_HEAD_SIGNATURE_KEY) ?? null,
    signedSeq: meta.get(CHAIN_HEAD_SIGNED_SEQ_KEY) ?? null,
    quarantineDigest: meta.get(QUARANTINE_DIGEST_KEY) ?? null,
    coverageDigest: meta.get(COVERAGE_DIGEST_KEY) ?? null,
    /** Records up to this seq have had their rule diff computed (0 when no backfill has run). */
    ruleDiffsBackfilledTo: parseBackfillMark(meta.get(BACKFILL_MARK_KEY)),
    quarantineLast: rows[0]?.quarantine_last ?? null,
  };
}

async function* recordsOf(q: Queries): AsyncGenerator<ChainRecord> {
  const copies =
    q.dialect === "postgres"
      ? sql`name, action_type, change_log, updated_by, updated_by_user_id, modifier_email, date_text, time_text, tags,`
      : sql``;
  const pages = pagesOf<Omit<ChainRecord, "ruleChanges">>(
    q,
    (after, limit) =>
      sql`SELECT seq, id, ${copies} raw, record_hash, chain_hash, occurred_at, server_day, s.summary, s.diff_version
          FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
          WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
    "seq",
  );
  for await (const page of pages) {
    // One query for the page's rule diffs (most records have none).
    const changes = await q.all<StoredRuleChange & { audit_log_id: string }>(
      sql`SELECT audit_log_id, rule_id, rule_name, change, field, old_value, new_value, old_position, new_position
          FROM rule_changes WHERE audit_log_id IN ${inList(page.map((r) => r.id))} ORDER BY id`,
    );
    const byRecord = new Map<string, StoredRuleChange[]>();
    for (const { audit_log_id, ...change } of changes) {
      const list = byRecord.get(audit_log_id) ?? [];
      list.push(change);
      byRecord.set(audit_log_id, list);
    }
    for (const row of page) yield { ...row, ruleChanges: byRecord.get(row.id) ?? [] };
  }
}

/** Reads of one snapshot (rows in key order); valid only inside the callback of readChainSnapshot. */
export type ChainReader = ReturnType<typeof readerOf>;

function readerOf(q: Queries) {
  const byId = <Row>(columns: string, table: string) =>
    rowsOf(
      pagesOf<Row & Record<string, unknown>>(
        q,
        (after, limit) =>
          sql`SELECT ${sql.raw(columns)} FROM ${sql.raw(table)} WHERE id > ${after} ORDER BY id LIMIT ${limit}`,
        "id",
      ),
    );
  return {
    meta: () => metaOf(q),
    records: () => recordsOf(q),
    revisions: () =>
      byId<{ id: number; audit_log_id: string; raw: string; record_hash: string }>(
        "id, audit_log_id, raw, record_hash",
        "audit_log_revisions",
      ),
    quarantine: () => byId<QuarantineRow>(QUARANTINE_COLUMNS, "quarantine"),
    // One row per filter set and day: small enough to read at once; byte order, as the digest folds it.
    coverage: async function* () {
      yield* await q.all<CoverageRow>(COVERAGE_ROWS);
    },
    chainHashAt: async (seq: number) =>
      (await q.get<{ chain_hash: string }>(sql`SELECT chain_hash FROM audit_logs WHERE seq = ${seq}`))
        ?.chain_hash ?? null,
    signedHead: (signedSeq: string | null, head: Head) => signedHeadIn(q, signedSeq, head),
    orphanRuleDiffs: () => orphanRuleDiffsIn(q),
  };
}

type Head = StateBeforeWrite["head"];

/** The record meta's chain:head_signed_seq names (chain hash "" when it is gone); null: no seq in meta. */
async function signedHeadIn(q: Queries, signedSeq: string | null, head: Head) {
  const seq = signedSeq === null ? null : Number(signedSeq);
  const hash = seq === null || seq === head?.seq ? head?.chainHash : await readerOf(q).chainHashAt(seq);
  return seq === null ? null : { seq, chainHash: hash ?? "" };
}

/** Runs `read` with a reader over one consistent snapshot of the store (inReadSnapshot). */
export function readChainSnapshot<T>(store: AnyStore, read: (reader: ChainReader) => Promise<T>): Promise<T> {
  return inReadSnapshot(store, (q) => read(readerOf(q)));
}

/**
 * The sync's reads before it writes, in its write transaction (src/chainChecks.ts judges them); the batch
 * then builds on these meta values instead of reading them again.
 */
export async function stateBeforeWriteIn(q: Queries, head: Head) {
  const { signedSeq, ...meta } = await metaOf(q);
  return { ...meta, head, signedHead: await signedHeadIn(q, signedSeq, head) };
}

/** What the next sync's first batch would find (stateBeforeWriteIn), read only: doctor's forecast. */
export const readStateBeforeWrite = (store: AnyStore) =>
  inReadSnapshot(store, async (q) => {
    const last = await q.get<NonNullable<Head>>(
      sql`SELECT seq, chain_hash AS "chainHash" FROM audit_logs ORDER BY seq DESC LIMIT 1`,
    );
    return stateBeforeWriteIn(q, last ?? null);
  });

/** Before an entity read's invalid items are quarantined: the digest folds in every row above its lastId. */
export async function checkQuarantineEndIn(q: Queries): Promise<void> {
  const meta = await metaOf(q);
  checkQuarantineEnd(meta.quarantineDigest, meta.quarantineLast);
}

/** Before a coverage write: the rows present against meta's digest; their fold, for the digest after it. */
export async function checkCoverageBeforeWriteIn(q: Queries) {
  const present = foldCoverageRows(await q.all<CoverageRow>(COVERAGE_ROWS));
  checkCoverageBeforeWrite(await metaOf(q), present.digest);
  return present;
}

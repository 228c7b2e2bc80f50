// Waivers, append-only: each row carries its own hash and a chain hash linking it to the row before, as
// the audit records do; `verify` re-walks them (src/verify/waivers.ts). What goes into a hash is decided
// outside the store (src/controls/waiverChain.ts): the store only keeps the rows in order.
import { readMetaValue, readMetaValueIn, writeMetaValueQuery } from "../metaValues.ts";
import type { AnyStore } from "../openAny.ts";
import { inReadSnapshot, inTransaction, queriesOf, sql } from "../query.ts";
import { lockControlWrites } from "./writeLock.ts";

/** meta's record of the register's last row, `{"seq":…,"hash":…}` (its chain hash): a removed tail shows. */
export const WAIVER_CHAIN_HEAD_KEY = "waiver_chain:head";

export interface WaiverRow {
  seq: number;
  finding_id: string;
  action: "waive" | "unwaive";
  reason: string;
  by_name: string;
  expires: string | null;
  created_at: number;
  hash: string;
  chain_hash: string;
}

/** Every waiver row, in seq order. */
export async function readWaivers(store: AnyStore): Promise<WaiverRow[]> {
  const q = await queriesOf(store);
  return q.all<WaiverRow>(sql`SELECT * FROM control_waivers ORDER BY seq`);
}

/** The head meta records for the register (JSON text), or undefined before the first waiver. */
export async function readWaiverHead(store: AnyStore): Promise<string | undefined> {
  return readMetaValue(store, WAIVER_CHAIN_HEAD_KEY);
}

/**
 * The rows and the head together, from one snapshot: a waiver committed meanwhile (its row and the head
 * in one transaction) is seen whole or not at all, so verify never takes it for a removed tail.
 */
export function readWaiverRegister(
  store: AnyStore,
): Promise<{ rows: WaiverRow[]; head: string | undefined }> {
  return inReadSnapshot(store, async (q) => ({
    rows: await q.all<WaiverRow>(sql`SELECT * FROM control_waivers ORDER BY seq`),
    head: await readMetaValueIn(q, WAIVER_CHAIN_HEAD_KEY),
  }));
}

/** Appends the row `make` builds after the last one (null for the first), and the head, in one transaction. */
export async function appendWaiver(
  store: AnyStore,
  make: (previous: { seq: number; chain_hash: string } | null) => WaiverRow,
): Promise<WaiverRow> {
  return inTransaction(store, async (q) => {
    await lockControlWrites(q);
    const previous = await q.get<{ seq: number; chain_hash: string }>(
      sql`SELECT seq, chain_hash FROM control_waivers ORDER BY seq DESC LIMIT 1`,
    );
    const row = make(previous ?? null);
    await q.run(sql`
      INSERT INTO control_waivers (seq, finding_id, action, reason, by_name, expires, created_at, hash, chain_hash)
      VALUES (${row.seq}, ${row.finding_id}, ${row.action}, ${row.reason}, ${row.by_name}, ${row.expires},
        ${row.created_at}, ${row.hash}, ${row.chain_hash})`);
    const head = JSON.stringify({ seq: row.seq, hash: row.chain_hash });
    await q.run(writeMetaValueQuery(WAIVER_CHAIN_HEAD_KEY, head, row.created_at));
    return row;
  });
}

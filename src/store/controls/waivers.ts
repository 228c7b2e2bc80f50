// Waivers, append-only: each row carries its own hash and a chain hash linking it to the row before, as
// the audit records do; `verify` re-walks them (src/verify/waivers.ts). What goes into a hash is decided
// outside the store (src/controls/waiverChain.ts): the store only keeps the rows in order.
import type { AnyStore } from "../openAny.ts";
import { inTransaction, queriesOf, sql } from "../query.ts";
import { lockControlWrites } from "./writeLock.ts";

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

/** Appends the row `make` builds after the last one (null for the first), in one transaction. */
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
    return row;
  });
}

// Waivers: who accepted a finding, why, until when. Rows are append-only and hash-chained (a changed
// reason, name or date breaks the chain `verify` walks); the state of a finding is its latest row.
import { CHAIN_GENESIS, chainLink, recordHash } from "../hash.ts";
import type { WaiverRow } from "../store/controls/waivers.ts";
import type { WaiverView } from "./finding.ts";
import { isoWithOffset } from "./isoTime.ts";

/** What a row's hash covers: every field but the hashes themselves. */
function waiverHash(row: Omit<WaiverRow, "hash" | "chain_hash">): string {
  const { seq, finding_id, action, reason, by_name, expires, created_at } = row;
  return recordHash({ seq, finding_id, action, reason, by_name, expires, created_at });
}

/** The row to append after `previous`, with its hash and chain link. */
export function nextWaiverRow(
  previous: { seq: number; chain_hash: string } | null,
  fields: Omit<WaiverRow, "seq" | "hash" | "chain_hash">,
): WaiverRow {
  const seq = (previous?.seq ?? 0) + 1;
  const hash = waiverHash({ ...fields, seq });
  return { ...fields, seq, hash, chain_hash: chainLink(previous?.chain_hash ?? CHAIN_GENESIS, hash) };
}

/** The first row whose hash or link does not match, or null when the chain is intact. */
export function brokenWaiver(rows: readonly WaiverRow[]): { row: WaiverRow; why: string } | null {
  let chain = CHAIN_GENESIS;
  let seq = 0;
  for (const row of rows) {
    seq += 1;
    if (row.seq !== seq) return { row, why: `seq ${row.seq} where ${seq} was expected (a row removed?)` };
    if (waiverHash(row) !== row.hash) return { row, why: "its content does not match its hash" };
    chain = chainLink(chain, row.hash);
    if (chain !== row.chain_hash) return { row, why: "its chain link does not match the row before" };
  }
  return null;
}

/** Each finding's waiver in force on `today` (YYYY-MM-DD, UTC): the latest row, if a waive not expired. */
export function waiversInForce(rows: readonly WaiverRow[], today: string): Map<string, WaiverView> {
  const latest = new Map<string, WaiverRow>();
  for (const row of rows) latest.set(row.finding_id, row);
  const inForce = new Map<string, WaiverView>();
  for (const [id, row] of latest) {
    if (row.action !== "waive" || (row.expires !== null && row.expires < today)) continue;
    inForce.set(id, {
      by: row.by_name,
      reason: row.reason,
      at: isoWithOffset(row.created_at),
      expires: row.expires,
    });
  }
  return inForce;
}

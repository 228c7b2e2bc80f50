// `verify`'s check of the waivers: every row re-hashed and re-linked (src/controls/waivers.ts), so a
// reason, name or expiry edited in the database, or a row removed, is named as the break it is; the last
// row is the head meta recorded, so rows removed from the end (a withdrawal deleted) show too.
import { brokenWaiver } from "../controls/waivers.ts";
import { IntegrityError } from "../errors.ts";
import { readWaiverRegister, WAIVER_CHAIN_HEAD_KEY } from "../store/controls/waivers.ts";
import type { AnyStore } from "../store/openAny.ts";

/** The number of waiver rows checked; an IntegrityError naming the first that does not match. */
export async function checkWaivers(store: AnyStore): Promise<number> {
  const { rows, head } = await readWaiverRegister(store);
  const broken = brokenWaiver(rows);
  if (broken) {
    throw new IntegrityError(
      `waiver row seq ${broken.row.seq} (finding ${broken.row.finding_id}) has been changed: ${broken.why}`,
      `waiver-${broken.row.seq}-changed`,
    );
  }
  const last = rows.at(-1);
  const recorded = headOf(head);
  if ((recorded?.seq ?? 0) !== (last?.seq ?? 0) || (recorded?.hash ?? null) !== (last?.chain_hash ?? null)) {
    throw new IntegrityError(
      `the waiver register's head recorded in meta (${WAIVER_CHAIN_HEAD_KEY}) is not its last row ` +
        `(${last ? `seq ${last.seq}` : "no rows"}): rows were removed from or added to the end`,
      "waiver-head",
    );
  }
  return rows.length;
}

function headOf(text: string | undefined): { seq?: unknown; hash?: unknown } | null {
  if (text === undefined) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}

// `verify`'s check of the waivers: every row re-hashed and re-linked (src/controls/waivers.ts), so a
// reason, name or expiry edited in the database, or a row removed, is named as the break it is.
import { brokenWaiver } from "../controls/waivers.ts";
import { IntegrityError } from "../errors.ts";
import { readWaivers } from "../store/controls/waivers.ts";
import type { AnyStore } from "../store/openAny.ts";

/** The number of waiver rows checked; an IntegrityError naming the first that does not match. */
export async function checkWaivers(store: AnyStore): Promise<number> {
  const rows = await readWaivers(store);
  const broken = brokenWaiver(rows);
  if (broken) {
    throw new IntegrityError(
      `waiver row seq ${broken.row.seq} (finding ${broken.row.finding_id}) has been changed: ${broken.why}`,
    );
  }
  return rows.length;
}

// The control findings `flagtrail export --findings` writes, a keyset page at a time.
import type { FindingRow } from "../controls/findings.ts";
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

/** The next `limit` findings after `afterId` (byte order), first seen in [from, to) when given. */
export async function readFindingsPage(
  store: AnyStore,
  page: { afterId: string | null; from?: number | undefined; to?: number | undefined; limit: number },
): Promise<FindingRow[]> {
  return (await queriesOf(store)).all<FindingRow>(sql`
    SELECT * FROM control_findings
    WHERE ${page.afterId === null ? sql`1 = 1` : sql`id COLLATE "binary" > ${page.afterId}`}
      ${page.from === undefined ? sql`` : sql`AND first_seen_at >= ${page.from}`}
      ${page.to === undefined ? sql`` : sql`AND first_seen_at < ${page.to}`}
    ORDER BY id COLLATE "binary"
    LIMIT ${page.limit}`);
}

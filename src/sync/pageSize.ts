// The largest page the server grants. No maximum `limit` is documented and the service reports the size
// it used in pagination.itemsPerPage: ask once for a large page, keep what was granted in the store, and
// fall back to the documented default when a large one is refused with a 400.
import { ApiError } from "../errors.ts";
import { readGrantedPageSize, saveGrantedPageSize } from "../store/syncStore.ts";
import { SYNC_DEFAULTS } from "./options.ts";
import type { SyncRun } from "./run.ts";

export async function resolvePageSize(run: SyncRun): Promise<number> {
  if (run.options.pageSize !== undefined) return run.options.pageSize;
  const known = await readGrantedPageSize(run.store);
  if (known !== undefined) return known;
  const asked = SYNC_DEFAULTS.preferredPageSize;
  let granted: number;
  try {
    // The newest day: the cheapest question whose answer (itemsPerPage) does not depend on the data.
    const page = await run.client.listAuditLogs(
      { startDate: run.options.until, endDate: run.options.until, page: 1, limit: asked, sortOrder: "desc" },
      run.signal,
    );
    const reported = page.pagination.itemsPerPage;
    granted = reported > 0 ? Math.min(reported, asked) : asked;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    granted = SYNC_DEFAULTS.fallbackPageSize;
  }
  await saveGrantedPageSize(run.store, granted, run.now());
  run.emit({
    type: "notice",
    message: `The server grants pages of ${granted} records; using that size from now on.`,
  });
  return granted;
}

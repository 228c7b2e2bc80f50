// Opening a store of either engine from a `--db` / FLAGTRAIL_DB value: a SQLite file path or a
// postgres:// URL (src/store/location.ts). The read commands take whichever handle this returns and
// pass it to store functions that dispatch on its `engine`.
import type { Store } from "./connection.ts";
import { parseStoreLocation } from "./location.ts";
import { openStore } from "./open.ts";
import type { PgStore } from "./pg/connection.ts";
import { openPgStore } from "./pg/open.ts";

/** An open store of either engine. `close()` may return a Promise (PostgreSQL): await it. */
export type AnyStore = Store | PgStore;

export interface AnyOpenOptions {
  /** Open without writing anything (no migrations; PostgreSQL transactions read-only by the server's rule). */
  readonly?: boolean;
}

export async function openAnyStore(value: string, options: AnyOpenOptions = {}): Promise<AnyStore> {
  const location = parseStoreLocation(value);
  return location.engine === "sqlite"
    ? openStore(location.path, options)
    : await openPgStore(location.url, options);
}

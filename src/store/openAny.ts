// Opening a store of either engine from a `--db` / FLAGTRAIL_DB value: a SQLite file path or a
// postgres:// URL (src/storeLocation.ts). The read commands take whichever handle this returns and
// pass it to store functions that dispatch on its `engine`.

import { parseStoreLocation } from "../storeLocation.ts";
import type { PgStore, Store } from "./connection.ts";
import { openStore } from "./open.ts";

/** An open store of either engine. `close()` may return a Promise (PostgreSQL): await it. */
export type AnyStore = Store | PgStore;

export interface AnyOpenOptions {
  /** Open without writing anything (no migrations; PostgreSQL transactions read-only by the server's rule). */
  readonly?: boolean;
}

/** The PostgreSQL half of the store (src/store/pg/side.ts). */
export type PgSide = typeof import("./pg/side.ts");

let pgSideLoading: Promise<PgSide> | undefined;

/**
 * The PostgreSQL half, loaded on first use: pg, drizzle's node-postgres driver and src/store/pg/ are ~70 modules
 * that a SQLite store never needs, and every command's start-up (and the sync's memory) paid for them.
 */
export function pgSide(): Promise<PgSide> {
  pgSideLoading ??= import("./pg/side.ts");
  return pgSideLoading;
}

export async function openAnyStore(value: string, options: AnyOpenOptions = {}): Promise<AnyStore> {
  const location = parseStoreLocation(value);
  return location.engine === "sqlite"
    ? openStore(location.path, options)
    : (await pgSide()).openPgStore(location.url, options);
}

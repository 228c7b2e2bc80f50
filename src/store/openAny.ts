// Opening a store of either engine from a `--db` / FLAGTRAIL_DB value (src/storeLocation.ts).
import { parseStoreLocation } from "../storeLocation.ts";
import { type PgStore, type Store, sqliteOf } from "./connection.ts";
import { type OpenOptions, openStore } from "./open.ts";

/** An open store of either engine. `close()` may return a Promise (PostgreSQL): await it. */
export type AnyStore = Store | PgStore;

let pgSideLoading: Promise<typeof import("./pg/side.ts")> | undefined;

/** The PostgreSQL half (pg/side.ts), loaded on first use: ~70 modules SQLite never needs. */
export function pgSide() {
  pgSideLoading ??= import("./pg/side.ts");
  return pgSideLoading;
}

export async function openAnyStore(value: string, options: OpenOptions = {}): Promise<AnyStore> {
  const location = parseStoreLocation(value);
  return location.engine === "sqlite"
    ? openStore(location.path, options)
    : (await pgSide()).openPgStore(location.url, options);
}

/** A SQLite store's size and its free pages' (a copy or deletes left them; VACUUM gives them back). */
export function sqliteFreeSpace(store: AnyStore): { fileBytes: number; freeBytes: number } | null {
  if (store.engine !== "sqlite") return null;
  const pages = (pragma: string) => sqliteOf(store).pragma(pragma, { simple: true }) as number;
  const size = pages("page_size");
  return { fileBytes: pages("page_count") * size, freeBytes: pages("freelist_count") * size };
}

// Opening a PostgreSQL store: a pool, drizzle/pg/'s migrations on a writable open, and open.ts's refusals.
import { fileURLToPath } from "node:url";
import { readMigrationFiles } from "drizzle-orm/migrator";
import pg from "pg";
import { FlagtrailError } from "../../errors.ts";
import { foreignStore, maskUrl, notAStore, poolUrl } from "../../storeLocation.ts";
import { type CategoryRow, categoryWrites, STORED_CATEGORIES } from "../categories.ts";
import { attachPgConnection, type PgConnection, type PgStore } from "../connection.ts";
import { releaseLease } from "../leases.ts";
import { assertCurrent, type OpenOptions } from "../open.ts";
import { describePgError } from "./errors.ts";

export type { PgStore } from "../connection.ts";

const migrationsFolder = fileURLToPath(new URL("../../../drizzle/pg", import.meta.url));
const MIGRATION_LOCK = [0x46_54_4c_02, 0] as const;

export interface PgOpenOptions extends OpenOptions {
  /** A project's own schema (projectStores.ts): every session's search_path, created on a writable open. */
  schema?: string;
}

function quotePgIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The first migration's hash before its foreign keys stopped naming "public": older stores carry it. */
const LEGACY_FIRST_MIGRATION_HASH = "9fb6db7d66f2a97dd91a763420c2cdebf47c98594cadc8cd984a8f5443d57e7f";

/** bigint (int8) and numeric as JS numbers: epoch ms, seq, count(*) and sum() read as from SQLite. */
const NUMERIC_TYPES: ReadonlySet<number> = new Set([pg.types.builtins.INT8, pg.types.builtins.NUMERIC]);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    NUMERIC_TYPES.has(oid) && format !== "binary"
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/** A login failing client-side (no SCRAM password) keeps socket and process until authentication_timeout. */
class ClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: (err: Error) => void): void;
  override connect(callback?: (err: Error) => void): Promise<pg.Client> | undefined {
    if (!callback) return super.connect();
    super.connect((error: Error | null) => {
      if (error) this.connection.stream.destroy();
      callback(error as Error);
    });
    return undefined;
  }
}

/** The current schema's tables and views, and the migrations applied (undefined: no drizzle table). */
async function migrationState(client: pg.ClientBase, schemaName: string | undefined) {
  const relations = await client.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()
     ORDER BY table_name`,
  );
  // As migrate() is told below: drizzle's default schema, or the project's own.
  const table = `${quotePgIdent(schemaName ?? "drizzle")}.__drizzle_migrations`;
  const hasTable = await client.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    table,
  ]);
  const applied = hasTable.rows[0]?.present
    ? (await client.query<{ hash: string; created_at: number }>(`SELECT hash, created_at FROM ${table}`)).rows
    : undefined;
  return { relations: relations.rows.map((r) => r.name), applied };
}
type MigrationState = Awaited<ReturnType<typeof migrationState>>;

const appliedTimes = (state: MigrationState) => (state.applied ?? []).map((m) => Number(m.created_at));

/** Another application's database must not gain our tables: refuse tables without our first migration. */
function assertNotForeign(state: MigrationState, where: string): void {
  const ours = new Set([readMigrationFiles({ migrationsFolder })[0]?.hash, LEGACY_FIRST_MIGRATION_HASH]);
  const migratedByUs = state.applied?.some((m) => ours.has(m.hash)) ?? false;
  if (migratedByUs || (state.relations.length === 0 && (state.applied?.length ?? 0) === 0)) return;
  throw foreignStore(where, "database", state.relations);
}

/** A project's schema must be the one its tables are made and read in, or nothing is written. */
async function assertSchema(client: pg.ClientBase, schemaName: string, where: string): Promise<void> {
  const name = (await client.query<{ name: string | null }>("SELECT current_schema() AS name")).rows[0]?.name;
  if (name !== schemaName) {
    throw new FlagtrailError(`${where}: the session's schema is ${name ?? "none"}, not ${schemaName}.`);
  }
}

/** Checks the database is ours (or empty) and, unless read-only, migrates it, one process at a time. */
async function prepare(pool: pg.Pool, where: string, options: PgOpenOptions): Promise<void> {
  const { readonly = false, schema: schemaName } = options;
  const client = await pool.connect();
  let broken = false;
  try {
    if (!readonly) {
      // Two processes opening a new store at once would both create its tables: the second waits here.
      await client.query("SELECT pg_advisory_lock($1, $2)", [...MIGRATION_LOCK]);
      if (schemaName !== undefined) {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quotePgIdent(schemaName)}`);
      }
    }
    if (schemaName !== undefined) await assertSchema(client, schemaName, where);
    const state = await migrationState(client, schemaName);
    assertNotForeign(state, where);
    if (readonly) return assertCurrent(where, migrationsFolder, appliedTimes(state));
    if (options.mustExist && (state.applied?.length ?? 0) === 0) throw notAStore(where);
    // Loaded by a write open only: a report starts without drizzle's PostgreSQL session (~10 ms sooner).
    const { drizzle } = await import("drizzle-orm/node-postgres");
    const { migrate } = await import("drizzle-orm/node-postgres/migrator");
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder, migrationsSchema: schemaName });
    // drizzle applies nothing to a store a newer flagtrail migrated: refused before anything is written.
    assertCurrent(where, migrationsFolder, appliedTimes(await migrationState(client, schemaName)));
    const writes = categoryWrites((await db.execute<CategoryRow>(STORED_CATEGORIES)).rows);
    if (writes.length > 0) {
      await db.transaction(async (tx) => {
        for (const write of writes) await tx.execute(write);
      });
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // Ending the session frees the migration lock whatever happened; a clean one goes back unlocked.
    if (!readonly && !broken) await client.query("SELECT pg_advisory_unlock($1, $2)", [...MIGRATION_LOCK]);
    client.release(broken || undefined);
  }
}

/** Opens the PostgreSQL store at `url` (postgres://…), creating or upgrading its tables unless read-only. */
export async function openPgStore(url: string, options: PgOpenOptions = {}): Promise<PgStore> {
  const readonly = options.readonly ?? false;
  const where = options.schema === undefined ? maskUrl(url) : `${maskUrl(url)} (schema ${options.schema})`;
  const settings: Record<string, string> = {
    ...(readonly ? { default_transaction_read_only: "on" } : {}),
    ...(options.schema === undefined ? {} : { search_path: quotePgIdent(options.schema) }),
  };
  const pool = new pg.Pool({
    connectionString: poolUrl(url, settings),
    application_name: "flagtrail",
    connectionTimeoutMillis: 10_000,
    // A lease is a session: keepalives let the server notice a holder whose machine vanished.
    keepAlive: true,
    max: 4,
    types,
    Client: ClosingClient,
  });
  // A session's 'error' would kill the process (checked out, pg-pool's listener is gone): queries report it.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  try {
    await prepare(pool, where, options);
  } catch (error) {
    await pool.end().catch(() => {});
    throw describePgError(error, url);
  }
  const connection: PgConnection = { pool, url, leases: new Map(), namespace: options.schema ?? null };
  const store: PgStore = {
    engine: "postgres",
    location: where,
    readonly,
    close: async () => {
      try {
        for (const [name, held] of [...connection.leases]) await releaseLease(store, name, held.holder);
      } catch (error) {
        throw describePgError(error, url);
      } finally {
        await pool.end();
      }
    },
  };
  return attachPgConnection(store, connection);
}

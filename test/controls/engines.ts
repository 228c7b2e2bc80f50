// A store under test on either engine, as the CLI sees it (--db value) and as assertions read it.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { freshDatabase, queryOnce } from "../pg/cluster.ts";

export type Engine = "sqlite" | "postgres";
export const ENGINES: Engine[] = ["sqlite", "postgres"];

export interface TestStore {
  engine: Engine;
  /** --db / FLAGTRAIL_DB */
  db: string;
  dir: string;
  /** Runs SQL written for both engines with `?` placeholders ($n on PostgreSQL). */
  query<R>(text: string, values?: unknown[]): Promise<R[]>;
  /** Writes a config file in the store's directory; returns its path. */
  config(body: unknown, name?: string): string;
}

function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

export async function testStore(engine: Engine): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-controls-"));
  const db = engine === "sqlite" ? join(dir, "flagtrail.db") : await freshDatabase("controls");
  return {
    engine,
    db,
    dir,
    async query<R>(text: string, values: unknown[] = []) {
      if (engine === "postgres") return (await queryOnce(db, numbered(text), values)) as R[];
      const sqlite = new Database(db);
      try {
        const statement = sqlite.prepare(text);
        if (statement.reader) return statement.all(...values) as R[];
        statement.run(...values);
        return [];
      } finally {
        sqlite.close();
      }
    },
    config(body, name = "flagtrail.config.json") {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(body, null, 2));
      return path;
    },
  };
}

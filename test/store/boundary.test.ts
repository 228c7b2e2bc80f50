// The store boundary: only src/store/ reaches the database. Everything else calls the functions its
// files export; a PostgreSQL engine then has one folder to implement.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");
const FORBIDDEN = [
  /from "better-sqlite3"/,
  /from "drizzle-orm(?:\/[^"]*)?"/,
  /from "[./]*\/?store\/connection\.ts"/,
  /from "[./]*\/?store\/schema\.ts"/,
  /\bsqliteOf\(|\bdrizzleOf\(/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the store boundary", () => {
  it("no module outside src/store imports the driver, drizzle, the connection or the schema", () => {
    const offenders = sources(SRC)
      .filter((path) => !relative(SRC, path).startsWith("store/"))
      // The simulator is the other side of the API: it has no store.
      .filter((path) => !relative(SRC, path).startsWith("simulator/"))
      .flatMap((path) => {
        const text = readFileSync(path, "utf8");
        return FORBIDDEN.filter((pattern) => pattern.test(text)).map((p) => `${relative(SRC, path)}: ${p}`);
      });
    expect(offenders).toEqual([]);
  });

  it("the sync side reaches the store only through its async boundary (syncStore.ts, projectStores.ts)", () => {
    const syncSide = (path: string) => {
      const rel = relative(SRC, path);
      return (
        /^(sync|daemon|demo)\//.test(rel) ||
        ["commands/sync.ts", "commands/daemon.ts", "commands/demo.ts"].includes(rel)
      );
    };
    const offenders = sources(SRC)
      .filter(syncSide)
      .flatMap((path) =>
        [...readFileSync(path, "utf8").matchAll(/from "((?:\.\.\/)+store\/[^"]+)"/g)]
          .map((m) => m[1] ?? "")
          // projectStores.ts opens a project's part of the store, through syncStore.ts itself.
          .filter((target) => !/store\/(syncStore|projectStores)\.ts$/.test(target))
          .map((target) => `${relative(SRC, path)}: ${target}`),
      );
    expect(offenders).toEqual([]);
  });
});

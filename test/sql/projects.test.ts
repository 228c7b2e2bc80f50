// runSqlInProjects' guards, which the CLI cannot reach on stores of one schema: a query whose columns
// differ between projects is refused before any row is written, and the projects' statements are
// closed after it, so that every store closes.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { FlagtrailError } from "../../src/errors.ts";
import { runSqlInProjects } from "../../src/sql/runSql.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";

function storeWith(table: string) {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-sqlprojects-")), "store.db");
  const writable = openStore(path);
  sqliteOf(writable).exec(`CREATE TABLE extra ${table}; INSERT INTO extra DEFAULT VALUES;`);
  writable.close();
  return openStore(path, { readonly: true });
}

describe("runSqlInProjects", () => {
  it("refuses columns that differ between projects before writing anything, and leaves each store closable", async () => {
    const eu = storeWith("(a INTEGER DEFAULT 1)");
    const us = storeWith("(a INTEGER DEFAULT 2, b TEXT DEFAULT 'x')");
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk));
    const projects = [
      { project: "eu", store: eu },
      { project: "us", store: us },
    ];
    const error = await runSqlInProjects(projects, "SELECT * FROM extra", "json", out).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FlagtrailError);
    expect((error as Error).message).toBe(
      "The query gives different columns in project eu (a) and in project us (a, b), so its rows cannot make one result.",
    );
    expect(Buffer.concat(chunks).toString()).toBe("");
    // Each project's statement was reset: the connections close (an open iteration would refuse).
    expect(() => eu.close()).not.toThrow();
    expect(() => us.close()).not.toThrow();
  });

  it("writes one result, project first, each project's rows in turn", async () => {
    const eu = storeWith("(a INTEGER DEFAULT 1)");
    const us = storeWith("(a INTEGER DEFAULT 2)");
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk));
    const rows = await runSqlInProjects(
      [
        { project: "eu", store: eu },
        { project: "us", store: us },
      ],
      "SELECT a FROM extra",
      "csv",
      out,
    );
    expect(rows).toBe(2);
    expect(Buffer.concat(chunks).toString()).toBe("project,a\r\neu,1\r\nus,2\r\n");
    eu.close();
    us.close();
  });
});

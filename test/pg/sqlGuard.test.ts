// `flagtrail sql` on PostgreSQL refuses anything but a single read query before it runs (issue 27 item 2).
// With a superuser role (the test cluster's), a READ ONLY transaction did not stop COPY … TO PROGRAM or
// TO a file, nor pg_read_file: they ran, and only then was the statement "refused and rolled back".
// Also the time limit (--timeout), exit 1. The first refusal is spawned (end to end); the other calls
// run the CLI in this process.
import { chmodSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openPgStore } from "../../src/store/pg/open.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

let url: string;
/** A folder the server's own OS user may write to: what a COPY … TO would create lands here. */
let dropbox: string;

beforeAll(async () => {
  url = await freshDatabase("guard");
  const store = await openPgStore(url);
  await store.close();
  await queryOnce(url, "INSERT INTO meta (key, value) VALUES ('guard', 'kept')");
  dropbox = mkdtempSync(join(tmpdir(), "ft-sql-guard-"));
  chmodSync(dropbox, 0o777);
});

async function sql(...args: string[]) {
  return runCliInProcess(["sql", "--db", url, ...args]);
}

const NOT_A_QUERY =
  /^flagtrail: refused: flagtrail sql runs a single read query \(SELECT, VALUES, TABLE or WITH … SELECT\) and PostgreSQL does not take this as one \(.+\); nothing was run\n$/;

describe("flagtrail sql on PostgreSQL refuses before running", () => {
  it("COPY … TO PROGRAM: exit 2, one sentence, the program never runs", async () => {
    const out = join(dropbox, "out.txt");
    const result = await runCli(["sql", "--db", url, `COPY (SELECT 1) TO PROGRAM 'id > ${out}'`]);
    expect(existsSync(out)).toBe(false);
    expect(result.stderr).toMatch(NOT_A_QUERY);
    expect(result.stderr).toContain('syntax error at or near "COPY"');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it("COPY … TO a file, also behind another statement: the file is never written", async () => {
    const file = join(dropbox, "copy.txt");
    for (const statement of [`COPY (SELECT 1) TO '${file}'`, `SELECT 1; COPY (SELECT 1) TO '${file}'`]) {
      const result = await sql(statement);
      expect(result.stderr, statement).toMatch(NOT_A_QUERY);
      expect(result.code, statement).toBe(2);
    }
    expect(existsSync(file)).toBe(false);
  });

  it("functions that read the server's files or reach beyond the tables, however the name is written", async () => {
    const cases = [
      ["SELECT pg_read_file('/etc/hostname') AS f", "pg_read_file"],
      [`SELECT U&"pg\\005fread_file"('/etc/hostname') AS f`, "pg_read_file"],
      ["SELECT count(*) FROM pg_ls_dir('.') AS d", "pg_ls_dir"],
      ["SELECT lo_import('/etc/hostname') AS oid", "lo_import"],
      ["SELECT current_setting('data_directory') AS d", "current_setting"],
      ["SELECT setting FROM pg_settings WHERE name = 'data_directory'", "pg_show_all_settings"],
      ["SELECT query FROM pg_stat_activity", "pg_stat_get_activity"],
      [
        "SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM meta WHERE pg_catalog.pg_read_binary_file('/etc/hostname') IS NULL)",
        "pg_read_binary_file",
      ],
      [
        `SELECT query_to_xml('COPY (SELECT 1) TO ''${join(dropbox, "xml.txt")}''', true, false, '') AS x`,
        "query_to_xml",
      ],
    ] as const;
    const results = await Promise.all(cases.map(([statement]) => sql(statement)));
    results.forEach((result, i) => {
      const [statement, name] = cases[i]!;
      expect(result.stderr, statement).toBe(
        `flagtrail: refused: the query calls ${name}(), which reaches beyond the store's tables (files, large objects, other servers, settings or sessions); flagtrail sql does not run it, and nothing was run\n`,
      );
      expect(result.code, statement).toBe(2);
      expect(result.stdout, statement).toBe("");
    });
    expect(existsSync(join(dropbox, "xml.txt"))).toBe(false);
    const [objects] = await queryOnce<{ n: string }>(
      url,
      "SELECT count(*) AS n FROM pg_largeobject_metadata",
    );
    expect(Number(objects?.n)).toBe(0);
  });

  it("a writable CTE, DML, SELECT … INTO, FOR UPDATE, EXPLAIN ANALYZE of a DELETE: nothing changes", async () => {
    const statements = [
      "WITH gone AS (DELETE FROM meta RETURNING key) SELECT * FROM gone",
      "DELETE FROM meta",
      "SELECT * INTO stolen FROM meta",
      "EXPLAIN ANALYZE DELETE FROM meta",
    ];
    const results = await Promise.all(statements.map((statement) => sql(statement)));
    results.forEach((result, i) => {
      expect(result.stderr, statements[i]).toMatch(NOT_A_QUERY);
      expect(result.code, statements[i]).toBe(2);
    });
    const locked = await sql("SELECT key FROM meta FOR UPDATE");
    expect(locked.stderr).toBe(
      "flagtrail: refused: the statement locks rows (FOR UPDATE/SHARE); flagtrail sql runs read queries only, and nothing was run\n",
    );
    expect(locked.code).toBe(2);
    const [kept] = await queryOnce<{ value: string }>(url, "SELECT value FROM meta WHERE key = 'guard'");
    expect(kept?.value).toBe("kept");
    expect(await queryOnce(url, "SELECT 1 FROM pg_tables WHERE tablename = 'stolen'")).toEqual([]);
  });

  it("still answers read queries, with parameters, VALUES and TABLE", async () => {
    const read = await sql("--csv", "--param", "k=guard", "SELECT value FROM meta WHERE key = @k");
    expect(read.stderr).toBe("");
    expect(read.stdout).toBe("value\r\nkept\r\n");
    expect((await sql("--csv", "VALUES (1, 'a')")).stdout).toBe("column1,column2\r\n1,a\r\n");
    expect((await sql("--json", "TABLE meta")).code).toBe(0);
    // A timestamp reads the same in every format: ISO 8601 in UTC (a table printed Date's toString, CSV
    // its epoch ms).
    const at = "SELECT TIMESTAMPTZ '2026-11-27 14:10:41+00' AS at";
    expect((await sql("--csv", at)).stdout).toBe("at\r\n2026-11-27T14:10:41.000Z\r\n");
    expect((await sql("--table", at)).stdout).toContain("2026-11-27T14:10:41.000Z");
    expect(JSON.parse((await sql("--json", at)).stdout)).toEqual([{ at: "2026-11-27T14:10:41.000Z" }]);
  });
});

describe("flagtrail sql --timeout on PostgreSQL", () => {
  it("stops a query that works longer, exit 1, one sentence", async () => {
    for (const statement of [
      "SELECT pg_sleep(30)",
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    ]) {
      const result = await sql("--timeout", "1", statement);
      expect(result.stderr, statement).toBe(
        "flagtrail: The query was stopped after 1 s of work, its time limit; nothing was changed.\n",
      );
      expect(result.code, statement).toBe(1);
      expect(result.stdout).toBe("");
    }
  });
});

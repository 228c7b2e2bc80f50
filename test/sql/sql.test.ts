import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.ts";
import { runSql, type SqlFormat } from "../../src/sql/runSql.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { buildScenarioStore } from "../report/scenario.ts";

let dbPath: string;
let readonly: Store;

beforeAll(() => {
  dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-sql-")), "store.db");
  buildScenarioStore(dbPath).close();
  readonly = openStore(dbPath, { readonly: true });
});
afterAll(() => readonly.close());

async function capture(query: string, format: SqlFormat): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  await runSql(readonly, query, format, out);
  return Buffer.concat(chunks).toString("utf8");
}

const QUERY = "SELECT id, name, updated_by FROM audit_logs WHERE seq IN (4, 6) ORDER BY seq";

describe("runSql", () => {
  it("prints a table", async () => {
    expect(await capture(QUERY, "table")).toBe(
      [
        "id                     | name                               | updated_by",
        "-----------------------+------------------------------------+-------------------",
        "S000000000000000000004 | checkout_flow                      | Bob Builder",
        "S000000000000000000006 | pricing `config` | v2\\nsecond line | =cmd|' /C calc'!A0",
        "(2 rows)",
        "",
      ].join("\n"),
    );
  });

  it("prints CSV with formula cells neutralised", async () => {
    expect(await capture(QUERY, "csv")).toBe(
      "id,name,updated_by\r\nS000000000000000000004,checkout_flow,Bob Builder\r\n" +
        "S000000000000000000006,\"pricing `config` | v2\nsecond line\",'=cmd|' /C calc'!A0\r\n",
    );
  });

  it("prints JSON", async () => {
    expect(JSON.parse(await capture(QUERY, "json"))).toEqual([
      { id: "S000000000000000000004", name: "checkout_flow", updated_by: "Bob Builder" },
      {
        id: "S000000000000000000006",
        name: "pricing `config` | v2\nsecond line",
        updated_by: "=cmd|' /C calc'!A0",
      },
    ]);
    expect(await capture("SELECT 1 WHERE 0", "json")).toBe("[]\n");
  });

  it("reads the views and the full-text index", async () => {
    const rows = JSON.parse(
      await capture(
        "SELECT a.id FROM audit_logs_fts f JOIN config_edits a ON a.seq = f.rowid WHERE audit_logs_fts MATCH 'conditions'",
        "json",
      ),
    );
    expect(rows).toEqual([{ id: "S000000000000000000009" }]);
  });

  it("lets SQLite refuse a write, and rejects bad SQL, as usage errors", async () => {
    await expect(capture("UPDATE audit_logs SET server_day = 'x'", "table")).rejects.toThrow(UsageError);
    await expect(capture("UPDATE audit_logs SET server_day = 'x'", "table")).rejects.toThrow(
      /refused.*writes/,
    );
    await expect(capture("DELETE FROM audit_logs", "table")).rejects.toThrow(/refused.*writes/);
    await expect(capture("SELEC 1", "table")).rejects.toThrow(/syntax error/);
    await expect(capture("SELECT 1; SELECT 2", "table")).rejects.toThrow(UsageError);
  });

  it("refuses VACUUM INTO, temp DDL and UPDATE … RETURNING without running them", async () => {
    const copy = join(mkdtempSync(join(tmpdir(), "flagtrail-sql-vacuum-")), "copy.db");
    await expect(capture(`VACUUM INTO '${copy}'`, "table")).rejects.toThrow(/refused.*nothing was run/);
    expect(existsSync(copy)).toBe(false);
    await expect(capture("CREATE TEMP TABLE t (a)", "table")).rejects.toThrow(/refused/);
    expect(() => sqliteOf(readonly).prepare("SELECT * FROM temp.t").all()).toThrow(/no such table/);
    await expect(
      capture("UPDATE audit_logs SET server_day = 'x' WHERE seq = 1 RETURNING name", "json"),
    ).rejects.toThrow(/refused.*writes/);
    await expect(capture("PRAGMA user_version = 7", "table")).rejects.toThrow(/refused/);
    // A statement returning no rows is not run either.
    await expect(capture(`ATTACH '${copy}' AS other`, "table")).rejects.toThrow(/returns no rows/);
    expect(existsSync(copy)).toBe(false);
    // Layer 2: the connection is query_only.
    expect(sqliteOf(readonly).pragma("query_only", { simple: true })).toBe(1);
  });
});

// The first spawned (end to end); the CLI's other runs in this process.
describe("flagtrail sql (CLI)", () => {
  it("answers a query", async () => {
    const result = await runCli([
      "sql",
      "SELECT count(*) AS n FROM experiment_state_changes",
      "--db",
      dbPath,
      "--format",
      "json",
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([{ n: 4 }]);
  });

  it("refuses an UPDATE with exit 2 and leaves the row as it was", async () => {
    const result = await runCliInProcess([
      "sql",
      "UPDATE audit_logs SET server_day = 'hacked' WHERE seq = 1",
      "--db",
      dbPath,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/refused/);
    expect(
      sqliteOf(readonly).prepare("SELECT server_day FROM audit_logs WHERE seq = 1").pluck().get(),
    ).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("binds named parameters from --param (integers as integers, NULL, JSON lists as text)", async () => {
    const result = await runCliInProcess([
      "sql",
      "SELECT count(*) AS n FROM audit_logs WHERE occurred_at >= @start AND (@types IS NULL OR action_type IN (SELECT value FROM json_each(@types))) AND @nothing IS NULL",
      "--db",
      dbPath,
      "--format",
      "json",
      "--param",
      `start=${Date.UTC(2024, 2, 31)}`,
      "--param",
      'types=["config_review_create","config_review_accept","gate_update"]',
      "--param",
      "nothing=NULL",
    ]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual([{ n: 3 }]);
    // SQLite binds a JS number as REAL: an integer literal must stay an integer (5 / 2 is 2).
    const typed = await runCliInProcess([
      "sql",
      "SELECT typeof(@n) AS t, @n / 2 AS half, typeof(@big) AS b, typeof(@text) AS x",
      "--db",
      dbPath,
      "--format",
      "json",
      ...["--param", "n=5", "--param", "big=9223372036854775807", "--param", "text=9223372036854775808"],
    ]);
    expect(JSON.parse(typed.stdout)).toEqual([{ t: "integer", half: 2, b: "integer", x: "text" }]);
    const missing = await runCliInProcess(["sql", "SELECT @start", "--db", dbPath]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Missing named parameter/);
    expect((await runCliInProcess(["sql", "SELECT 1", "--db", dbPath, "--param", "no-equals"])).code).toBe(2);
  });

  it("exits 2 on bad SQL and on a bad --format", async () => {
    expect((await runCliInProcess(["sql", "SELECT * FROM nope", "--db", dbPath])).code).toBe(2);
    expect((await runCliInProcess(["sql", "SELECT 1", "--db", dbPath, "--format", "xml"])).code).toBe(2);
  });
});

describe("flagtrail sql table", () => {
  it("lines up columns after wide (CJK) and combining characters as a terminal shows them", async () => {
    // 日本語 takes six columns, "Zoe\u0308" (e and a combining diaeresis) three.
    const query =
      "SELECT '日本語' AS name, 'x' AS k UNION ALL SELECT 'Zoe' || char(776), 'y' UNION ALL SELECT 'ab', 'z'";
    const result = await runCliInProcess(["sql", query, "--db", dbPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      ["name   | k", "-------+--", "日本語 | x", "Zoe\u0308    | y", "ab     | z", "(3 rows)", ""].join("\n"),
    );
  });
});

describe("flagtrail sql table: zero-width characters", () => {
  it("gives a zero-width space, joiner or no-break (U+200B, U+200D, U+2060, U+FEFF) no column", async () => {
    // Names pasted from a web page or a chat carry them; a terminal shows nothing for them (wcwidth 0), so
    // counting each as a column put every column after the cell one too far left.
    const query =
      "SELECT 'ab' || char(8203) AS name, 'x' AS k UNION ALL SELECT char(65279) || 'cd' || char(8205), 'y' " +
      "UNION ALL SELECT 'e' || char(8288) || 'f', 'z' UNION ALL SELECT 'ghij', 'w'";
    const result = await runCliInProcess(["sql", query, "--db", dbPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        "name | k",
        "-----+--",
        "ab\u200b   | x",
        "\ufeffcd\u200d   | y",
        "e\u2060f   | z",
        "ghij | w",
        "(4 rows)",
        "",
      ].join("\n"),
    );
  });
});

describe("flagtrail sql output flags (issue 9)", () => {
  it("--csv, --json, --nl and --table as sqlite-utils users type them; --format still works; a clash exits 2", async () => {
    const query = "SELECT 1 AS a, 'Zoë' AS b UNION ALL SELECT 2, NULL";
    const run = (...flags: string[]) => runCliInProcess(["sql", query, "--db", dbPath, ...flags]);
    const [csv, json, nl, table, format, clash] = await Promise.all([
      run("--csv"),
      run("--json"),
      run("--nl"),
      run("--table"),
      run("--format", "nl"),
      run("--csv", "--format", "json"),
    ]);
    expect(csv.stdout).toBe("a,b\r\n1,Zoë\r\n2,\r\n");
    expect(JSON.parse(json.stdout)).toEqual([
      { a: 1, b: "Zoë" },
      { a: 2, b: null },
    ]);
    expect(nl.stdout).toBe('{"a":1,"b":"Zoë"}\n{"a":2,"b":null}\n');
    expect(format.stdout).toBe(nl.stdout);
    expect(table.stdout).toMatch(/^a \| b\n/);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toBe(
      "flagtrail: --format, --csv, --json, --nl and --table disagree: csv and json.\n",
    );
  });
});

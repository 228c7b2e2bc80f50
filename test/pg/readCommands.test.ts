// The read commands on PostgreSQL through the real CLI: one history synced from the simulator into
// SQLite, copied into PostgreSQL (test/pg/copyStore.ts), then `sql`, `verify`, `status` and `report`
// run on both stores must print the same; a write through `sql` is refused by the server. One run of each
// read command is spawned (end to end); the others, and the syncs that make the history, run the CLI in
// this process.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runSql } from "../../src/sql/runSql.ts";
import { openAnyStore } from "../../src/store/openAny.ts";
import { runCliInProcess as cli } from "../helpers/inProcessCli.ts";
import { printedQueries } from "../helpers/printedQueries.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath, withDb } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";
import { copyStore } from "./copyStore.ts";

let sim: RunningSimulator;
let sqlitePath: string;
let url: string;
let copied: Record<string, number>;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 500, days: 40, faults: { malformedRate: 0.02 } });
  sqlitePath = tempDbPath("flagtrail-pgread-");
  const synced = await cli(["sync", "--since", daysAgo(45), "--json"], { env: simEnv(sim, sqlitePath) });
  if (synced.code !== 0) throw new Error(`sync failed: ${synced.stderr}`);
  // Two records rewritten at the source after the fact: the store keeps them as revisions (mutations).
  const victims = withDb(sqlitePath, (db) =>
    db
      .prepare("SELECT id FROM audit_logs WHERE occurred_at > ? ORDER BY seq LIMIT 2")
      .pluck()
      .all(Date.now() - 30 * 86_400_000),
  ) as string[];
  for (const id of victims) sim.control.mutate(id, { changeLog: "rewritten after the fact" });
  const again = await cli(["sync", "--full", "--since", daysAgo(45), "--json"], {
    env: simEnv(sim, sqlitePath),
  });
  if (again.code !== 0) throw new Error(`second sync failed: ${again.stderr}`);
  url = await freshDatabase("read");
  copied = await copyStore(sqlitePath, url);
});
afterAll(async () => {
  await sim?.close();
});

/** `args` run once with `--db` on each store. */
async function onBoth(args: readonly string[]) {
  const [lite, pg] = await Promise.all([cli([...args, "--db", sqlitePath]), cli([...args, "--db", url])]);
  return { lite, pg };
}

describe("the copied history", () => {
  it("has records, quarantine and coverage in PostgreSQL", async () => {
    expect(copied.audit_logs).toBeGreaterThan(400);
    expect(copied.quarantine).toBeGreaterThan(0);
    expect(copied.coverage).toBeGreaterThan(30);
    expect(copied.audit_log_revisions).toBe(2);
    expect(copied.rule_changes).toBeGreaterThan(0);
    const [row] = await queryOnce<{ n: string }>(url, "SELECT count(*) AS n FROM audit_logs");
    expect(Number(row?.n)).toBe(copied.audit_logs);
  });
});

describe("flagtrail doctor on PostgreSQL", () => {
  it("opens the store and leaves its free space to PostgreSQL; SQLite's file is measured", async () => {
    const { lite, pg } = await onBoth(["doctor"]);
    const line = (stdout: string, name: string) =>
      stdout.split("\n").find((l) => new RegExp(`^\\w+ +${name} {2,}`).test(l));
    expect(line(pg.stdout, "store")).toMatch(/^ok +store +.*opens \(PostgreSQL\)$/);
    expect(line(pg.stdout, "free pages")).toMatch(
      /^ok +free pages +not checked here: PostgreSQL's autovacuum manages its free space$/,
    );
    expect(line(lite.stdout, "free pages")).toMatch(
      /^ok +free pages +\d+\.\d MiB \(\d+ bytes, \d+ %\) of the /,
    );
  });
});

describe("flagtrail sql on PostgreSQL", () => {
  const query =
    'SELECT action_type, count(*) AS records, min(occurred_at) AS first_at, max(seq) AS last_seq FROM audit_logs GROUP BY action_type ORDER BY action_type COLLATE "C"';

  it("prints the same rows as on SQLite in every format, numbers as numbers", async () => {
    // Independent read-only runs, all at once (the suite's time is mostly CLI start-ups).
    const runs = await Promise.all(
      ["table", "csv", "json", "nl"].map(async (format) => ({
        // SQLite has no COLLATE "C": its own byte order is the same order.
        lite: await cli(["sql", "--db", sqlitePath, "--format", format, query.replace(' COLLATE "C"', "")]),
        pg: await (format === "table" ? runCli : cli)(["sql", "--db", url, "--format", format, query]),
      })),
    );
    for (const { lite, pg } of runs) {
      expect(pg.stderr).toBe("");
      expect(pg.code).toBe(0);
      expect(pg.stdout).toBe(lite.stdout);
    }
    const rows = JSON.parse((await cli(["sql", "--db", url, "--json", query])).stdout);
    expect(typeof rows[0].records).toBe("number");
    expect(typeof rows[0].first_at).toBe("number");
  });

  it("binds --param the same way (@name), integers as integers", async () => {
    const text = "SELECT id, seq FROM audit_logs WHERE seq <= @top AND action_type <> @skip ORDER BY seq";
    const args = ["sql", "--csv", "--param", "top=25", "--param", "skip=nothing", text];
    const { lite, pg } = await onBoth(args);
    expect(pg.code).toBe(0);
    expect(pg.stdout).toBe(lite.stdout);
    expect(pg.stdout.trim().split("\r\n")).toHaveLength(26);
  });

  it("refuses a write before running it, exit 2 as on SQLite, nothing written", async () => {
    const writes = [
      "DELETE FROM audit_logs",
      "UPDATE audit_logs SET name = 'x' RETURNING id",
      "WITH gone AS (DELETE FROM meta RETURNING key) SELECT * FROM gone",
      "SELECT 1; COMMIT; DELETE FROM audit_logs",
    ];
    const [lite, ...pgs] = await Promise.all([
      cli(["sql", "--db", sqlitePath, "DELETE FROM audit_logs"]),
      ...writes.map((write) => cli(["sql", "--db", url, write])),
    ]);
    pgs.forEach((pg, i) => {
      expect(pg?.code, writes[i]).toBe(2);
      expect(pg?.stdout).toBe("");
      expect(pg?.stderr.trim().split("\n"), writes[i]).toHaveLength(1);
    });
    // Refused before it reaches the executor: a cursor's query cannot be a DELETE (test/pg/sqlGuard.test.ts).
    expect(pgs[0]?.stderr).toMatch(/refused: flagtrail sql runs a single read query/);
    expect(lite.code).toBe(2);
    const [row] = await queryOnce<{ n: string }>(url, "SELECT count(*) AS n FROM audit_logs");
    expect(Number(row?.n)).toBe(copied.audit_logs);
  });

  it("reports SQL errors in one sentence (exit 2) with the password masked", async () => {
    const pg = await cli(["sql", "--db", url, "SELECT nope FROM audit_logs"]);
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(/SQL error: column "nope" does not exist/);
  });
});

/** The commands that read PostgreSQL so far. */
const READ_COMMANDS = ["sql", "verify", "status", "report"];

describe("flagtrail verify on PostgreSQL", () => {
  it("passes on both stores with the same findings", async () => {
    const { lite, pg } = await onBoth(["verify"]);
    expect(pg.stderr).toBe("");
    expect(pg.code).toBe(0);
    expect(pg.stdout).toMatch(/^OK: hash chain of \d+ records intact/);
    expect(pg.stdout).toMatch(
      /quarantine: [1-9]\d* rows? match(es its| their) digest; coverage: [1-9]\d* rows match their digest/,
    );
    expect(pg.stdout).toMatch(/entity chain of [1-9]\d* rows intact/);
    expect(pg.stdout).toBe(lite.stdout);
  });

  it("catches a row edited in PostgreSQL, naming it (exit 1)", async () => {
    const [row] = await queryOnce<{ name: string; id: string }>(
      url,
      "SELECT name, id FROM audit_logs WHERE seq = 7",
    );
    await queryOnce(url, "UPDATE audit_logs SET name = 'tampered' WHERE seq = 7");
    try {
      const result = await runCli(["verify", "--db", url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`seq 7 (id ${row?.id})`);
      expect(result.stderr).toMatch(/name/);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await queryOnce(url, "UPDATE audit_logs SET name = $1 WHERE seq = 7", [row?.name]);
    }
    expect((await cli(["verify", "--db", url])).code).toBe(0);
  });

  it("catches an entity row edited in PostgreSQL (the entity chain is walked there too)", async () => {
    const [row] = await queryOnce<{ id: number; raw: string }>(
      url,
      "SELECT id, raw FROM config_versions ORDER BY entity_seq LIMIT 1",
    );
    await queryOnce(
      url,
      'UPDATE config_versions SET raw = replace(raw, \'"id":"\', \'"id":"X\') WHERE id = $1',
      [row?.id],
    );
    try {
      const result = await cli(["verify", "--db", url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`config_versions row ${row?.id}`);
    } finally {
      await queryOnce(url, "UPDATE config_versions SET raw = $1 WHERE id = $2", [row?.raw, row?.id]);
    }
    expect((await cli(["verify", "--db", url])).code).toBe(0);
  });
});

describe("flagtrail status on PostgreSQL", () => {
  it("prints what SQLite's prints, the database named by its masked URL", async () => {
    const { lite, pg } = await onBoth(["status"]);
    expect(pg.stderr).toBe("");
    expect(pg.code).toBe(0);
    const masked = url.replace(/:[^:@/]+@/, ":***@");
    expect(pg.stdout).toContain(`Database ${masked}\n`);
    expect(pg.stdout).not.toContain(new URL(url).password);
    expect(pg.stdout).toMatch(/Quarantined records: [1-9]/);
    expect(pg.stdout.replace(masked, "<db>")).toBe(lite.stdout.replace(sqlitePath, "<db>"));
  });

  it("--json holds the same values", async () => {
    const { lite, pg } = await onBoth(["status", "--json"]);
    expect(pg.code).toBe(0);
    const [a, b] = [JSON.parse(lite.stdout), JSON.parse(pg.stdout)];
    expect({ ...b, database: "" }).toEqual({ ...a, database: "" });
    expect(b.records.total).toBe(copied.audit_logs);
  });
});

/** The ```sql blocks of a Markdown report, each with the `--param`s printed under it. */
async function sqlRows(location: string, sql: string, params: Record<string, unknown>) {
  const store = await openAnyStore(location, { readonly: true });
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  try {
    await runSql(store, sql, "json", out, params);
  } finally {
    await store.close();
  }
  return Buffer.concat(chunks).toString("utf8");
}

describe("flagtrail report on PostgreSQL", () => {
  const period = ["--from", daysAgo(40), "--to", daysAgo(1)];
  let dirs: { lite: string; pg: string };

  beforeAll(async () => {
    dirs = {
      lite: mkdtempSync(join(tmpdir(), "ft-report-lite-")),
      pg: mkdtempSync(join(tmpdir(), "ft-report-pg-")),
    };
    const [lite, pg] = await Promise.all([
      cli(["report", "--db", sqlitePath, "--out", dirs.lite, ...period]),
      runCli(["report", "--db", url, "--out", dirs.pg, ...period]),
    ]);
    expect(lite.code, lite.stderr).toBe(0);
    expect(pg.stderr).toBe("");
    expect(pg.code).toBe(0);
  });

  it("writes byte-identical CSVs with rows in them", () => {
    const csvs = readdirSync(dirs.lite).filter((name) => name.endsWith(".csv"));
    expect(csvs).toHaveLength(3);
    expect(readdirSync(dirs.pg).sort()).toEqual(readdirSync(dirs.lite).sort());
    for (const name of csvs) {
      const lite = readFileSync(join(dirs.lite, name));
      expect(readFileSync(join(dirs.pg, name)).equals(lite), name).toBe(true);
    }
    const states = readdirSync(dirs.lite).find((n) => n.startsWith("experiment-state-changes"))!;
    expect(readFileSync(join(dirs.lite, states), "utf8").split("\r\n").length).toBeGreaterThan(10);
  });

  it("writes byte-identical Markdown, each query printed once, as one text for both engines", () => {
    const name = readdirSync(dirs.lite).find((n) => n.endsWith(".md"))!;
    const [lite, pg] = [
      readFileSync(join(dirs.lite, name), "utf8"),
      readFileSync(join(dirs.pg, name), "utf8"),
    ];
    // The generation time is the one line that may differ (two processes, two clocks).
    const withoutTime = (text: string) => text.replace(/\| Generated at \| [^|]+ \|/, "");
    expect(withoutTime(pg)).toBe(withoutTime(lite));
    expect(printedQueries(pg).length).toBeGreaterThan(10);
    expect(printedQueries(pg).some((q) => q.sql.includes("json_each(@"))).toBe(true);
    expect(pg).not.toContain("json_array_elements");
  });

  it("each printed query re-runs with `flagtrail sql` on either engine and gives the same rows on both", async () => {
    const name = readdirSync(dirs.lite).find((n) => n.endsWith(".md"))!;
    const queries = printedQueries(readFileSync(join(dirs.pg, name), "utf8"));
    expect(queries.length).toBeGreaterThan(10);
    for (const query of queries) {
      expect(await sqlRows(url, query.sql, query.params), query.sql).toBe(
        await sqlRows(sqlitePath, query.sql, query.params),
      );
    }
  });

  it("the manifests agree but for the generation time and the hashes of files that carry it", () => {
    const name = readdirSync(dirs.lite).find((n) => n.startsWith("manifest"))!;
    const strip = (text: string) => {
      const manifest = JSON.parse(text);
      manifest.generatedAt = "";
      // The Markdown (and HTML) carry the generation time, so their hashes differ with it.
      manifest.files = manifest.files.filter((f: { name: string }) => !/\.(md|html)$/.test(f.name));
      return manifest;
    };
    const [lite, pg] = [join(dirs.lite, name), join(dirs.pg, name)].map((p) =>
      strip(readFileSync(p, "utf8")),
    );
    expect(pg).toEqual(lite);
    expect(pg.store.chainHead.seq).toBe(copied.audit_logs);
  });
});

describe("a read-only reporting role", () => {
  const grants = {
    "the README's one-line grant": (role: string) => [`GRANT pg_read_all_data TO ${role}`],
    "the README's narrower grants": (role: string) => [
      `GRANT USAGE ON SCHEMA public, drizzle TO ${role}`,
      `GRANT SELECT ON ALL TABLES IN SCHEMA public, drizzle TO ${role}`,
    ],
  };
  for (const [index, [how, statements]] of Object.entries(grants).entries()) {
    it(`with ${how} runs every read command, and cannot write`, async () => {
      const role = `reader_${Date.now()}`;
      await queryOnce(url, `CREATE ROLE ${role} LOGIN PASSWORD 'reader-pw'`);
      for (const statement of statements(role)) await queryOnce(url, statement);
      const u = new URL(url);
      u.username = role;
      u.password = "reader-pw";
      const reader = u.toString();
      // The first role's status spawned (a reader's end to end), the second's in this process.
      const status = await (index === 0 ? runCli : cli)(["status", "--db", reader]);
      expect(status.stderr).toBe("");
      expect(status.code).toBe(0);
      expect((await cli(["verify", "--db", reader])).code).toBe(0);
      const out = mkdtempSync(join(tmpdir(), "ft-report-reader-"));
      const report = await cli([
        "report",
        "--db",
        reader,
        "--out",
        out,
        "--from",
        daysAgo(10),
        "--to",
        daysAgo(2),
      ]);
      expect(report.code).toBe(0);
      const count = await cli(["sql", "--db", reader, "--csv", "SELECT count(*) AS n FROM audit_logs"]);
      expect(count.stdout).toBe(`n\r\n${copied.audit_logs}\r\n`);
      const write = await cli(["sql", "--db", reader, "DELETE FROM meta"]);
      expect(write.code).toBe(2);
    });
  }
});

describe("connection failures", () => {
  function withParts(parts: { password?: string; database?: string; port?: string }): string {
    const u = new URL(url);
    if (parts.password !== undefined) u.password = parts.password;
    if (parts.database !== undefined) u.pathname = `/${parts.database}`;
    if (parts.port !== undefined) u.port = parts.port;
    return u.toString();
  }

  it("wrong password, missing database, unreachable server: one sentence, masked URL, exit 1", async () => {
    const cases = [
      [withParts({ password: "s3cret-wrong" }), /refused the login .*wrong user name or password/],
      [withParts({ database: "no_such_db", password: "s3cret-wrong2" }), /does not exist|wrong user name/],
      [withParts({ port: "1", password: "s3cret-wrong3" }), /Cannot reach the PostgreSQL server/],
    ] as const;
    const runs = cases.flatMap(([target, pattern]) =>
      READ_COMMANDS.map(async (command) => {
        const args =
          command === "sql"
            ? ["sql", "--db", target, "SELECT 1"]
            : command === "report"
              ? ["report", "--db", target, "--from", daysAgo(10), "--to", daysAgo(2), "--out", tempDbPath()]
              : [command, "--db", target];
        return { what: `${command} ${target}`, pattern, result: await cli(args) };
      }),
    );
    for (const { what, pattern, result } of await Promise.all(runs)) {
      expect(result.code, what).toBe(1);
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr).toContain(":***@");
      expect(result.stderr).not.toMatch(/s3cret/);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
  });

  it("a missing database is named as such", async () => {
    const result = await cli(["status", "--db", withParts({ database: "no_such_db" })]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/does not exist on that server/);
  });
});

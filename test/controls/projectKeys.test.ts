// Two projects may hold the same audit record id (docs/projects.md), so the same finding id: a webhook's
// Idempotency-Key (and an exec sink's key) must tell their alerts apart, or a receiver that drops a
// repeated key drops the second project's alert as a copy of the first's (review h62). Two simulators
// whose record ids overlap, synced into one store; a real receiver on 127.0.0.1 and an exec program.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";
import { syncBoth, type TwoProjects, useTwoProjects } from "../helpers/twoProjects.ts";

const twoProjects = useTwoProjects(120);

/** Each accepted request: its Idempotency-Key and the project and id of the finding it carried. */
interface Received {
  key: string;
  project: string;
  id: string;
}

describe("alerts of two projects holding the same finding id", () => {
  let server: Server;
  const received: Received[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const { finding } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          finding: { project: string; id: string };
        };
        received.push({ key: String(req.headers["idempotency-key"]), ...finding });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("carry a key of their own per project (webhook and exec)", async () => {
    const projects: TwoProjects = await twoProjects();
    const db = tempDbPath();
    await syncBoth(projects, db);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-keys-"));
    const dump = join(dir, "keys.ndjson");
    const printer = `require("node:fs").appendFileSync(process.argv[1], JSON.stringify({ key: process.env.FLAGTRAIL_EVENT_ID, ...JSON.parse(require("node:fs").readFileSync(0, "utf8")).finding }) + "\\n")`;
    const config = JSON.parse(readFileSync(projects.config, "utf8")) as Record<string, unknown>;
    const path = join(dir, "flagtrail.config.json");
    // Every change lacks this ticket: each is a finding, in both projects where their ids meet.
    const body = {
      ...config,
      controls: [{ id: "tk", kind: "ticket-reference", severity: "low", pattern: "NEVER-\\d+" }],
      sinks: [
        { name: "hook", kind: "webhook", url, secretEnv: "PK_SECRET" },
        { name: "pager", kind: "exec", command: process.execPath, args: ["-e", printer, dump] },
      ],
    };
    writeFileSync(path, JSON.stringify(body));
    const check = await runCliInProcess(
      ["check", "--config", path, "--db", db, "--from", "2000-01-01", "--notify", "--format", "json"],
      { env: { ...projects.env, PK_SECRET: "s" } },
    );
    expect(check.stderr).not.toMatch(/undelivered|unexpected/);
    const ran = readFileSync(dump, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Received);
    for (const alerts of [received, ran]) {
      const findings = new Set(alerts.map((a) => `${a.project} ${a.id}`));
      const ids = (p: string) => new Set(alerts.filter((a) => a.project === p).map((a) => a.id));
      // The case under test: some finding id is in both projects.
      expect([...ids("eu")].some((id) => ids("us").has(id))).toBe(true);
      // One key per finding of a project, and no key for two of them.
      const projectsOfKey = new Map<string, Set<string>>();
      for (const a of alerts)
        projectsOfKey.set(a.key, (projectsOfKey.get(a.key) ?? new Set()).add(`${a.project} ${a.id}`));
      expect(projectsOfKey.size).toBe(findings.size);
      expect([...projectsOfKey.values()].filter((f) => f.size > 1)).toEqual([]);
      // The finding's event id, as a SIEM sink gives it.
      for (const a of alerts) expect(a.key).toBe(`${a.project}:finding:${a.id}`);
    }
  });
});

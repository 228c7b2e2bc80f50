// Rule diffs are written by the sync itself, in the same transaction as the records they describe.
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

describe("sync writes rule diffs", () => {
  it("diffs every stored rule edit of the simulator's history into rule_changes and a summary", async () => {
    const sim = await startSim({ records: 1500, days: 100 });
    const db = tempDbPath();
    const result = await runCli(
      ["sync", "--since", daysAgo(105), "--page-size", "500", "--no-coverage", "--quiet"],
      {
        env: simEnv(sim, db),
      },
    );
    expect(result.code, result.stderr).toBe(0);

    const facts = withDb(db, (d) => ({
      withRules: d
        .prepare("SELECT count(*) FROM audit_logs WHERE json_extract(changes, '$.rules') IS NOT NULL")
        .pluck()
        .get() as number,
      summaries: d.prepare("SELECT count(*) FROM rule_diff_summaries").pluck().get() as number,
      orphanSummaries: d
        .prepare(
          "SELECT count(*) FROM rule_diff_summaries s JOIN audit_logs a ON a.id = s.audit_log_id WHERE json_extract(a.changes, '$.rules') IS NULL",
        )
        .pluck()
        .get() as number,
      kinds: d.prepare("SELECT DISTINCT change FROM rule_changes ORDER BY change").pluck().all() as string[],
      fields: d
        .prepare("SELECT DISTINCT field FROM rule_changes WHERE field IS NOT NULL")
        .pluck()
        .all() as string[],
    }));
    expect(facts.withRules).toBeGreaterThan(10);
    expect(facts.summaries).toBe(facts.withRules);
    expect(facts.orphanSummaries).toBe(0);
    expect(facts.kinds).toEqual(["added", "modified", "moved", "removed"]);
    expect(facts.fields.some((f) => f.startsWith("percentagePass"))).toBe(true);
  });
});

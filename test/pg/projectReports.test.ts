// `flagtrail report` on a PostgreSQL store holding two projects (schemas public_eu and public_us),
// through the real CLI after a real sync of two simulators: the combined set against the reports of
// each project alone, as on SQLite (test/report/projects.test.ts).
import { describe, expect, it } from "vitest";
import { expectCombinedCsvs, expectOverview, expectVerified, reportOf } from "../helpers/projectReports.ts";
import { PROJECT_NAMES, syncBoth, useTwoProjects } from "../helpers/twoProjects.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const twoProjects = useTwoProjects();

describe("flagtrail report on a PostgreSQL store holding two projects", () => {
  it("writes one set: eu's rows then us's, each project's completeness and section; verify accepts it", async () => {
    const url = await freshDatabase("projreport");
    await syncBoth(await twoProjects(), url);
    const [combined, eu, us] = await Promise.all([
      reportOf(url),
      reportOf(url, ["--project", "eu"]),
      reportOf(url, ["--project", "us"]),
    ]);
    const alone = { eu, us };
    expectCombinedCsvs(combined, alone);
    for (const project of PROJECT_NAMES) {
      const { period, files } = alone[project].manifest;
      const [row] = await queryOnce<{ n: string }>(
        url,
        `SELECT count(*) AS n FROM public_${project}.config_edits WHERE occurred_at >= $1 AND occurred_at < $2`,
        [period.start, period.end],
      );
      expect(files.find((f) => f.name.startsWith("config-edits_"))!.rows).toBe(Number(row?.n));
    }
    expectOverview(combined.read(`compliance_${combined.stem}.md`), alone);
    expect(combined.manifest.format).toBe("flagtrail-report-manifest/2");
    expect(combined.manifest.store).toEqual({
      projects: PROJECT_NAMES.map((project) => ({ project, ...alone[project].manifest.store })),
    });
    await expectVerified(combined);
  });
});

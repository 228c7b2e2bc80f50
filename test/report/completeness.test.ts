// Completeness is checked per server day. With --tz different from the server's zone, the report must
// name the server days the period overlaps (including the partly-covered first and last one) and
// recount local records from the snapshot instead of trusting the count stored at sync time.

import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { insertRecords, makeRecord } from "./fixtures.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Time texts as a server in Los Angeles (PDT, UTC-7) writes them. */
function laTexts(epochMs: number): { date: string; time: string } {
  const d = new Date(epochMs - 7 * 3_600_000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return {
    date: `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()}`,
    time: `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT-0700 (Pacific Daylight Time)`,
  };
}

function laRecord(epochMs: number, name: string) {
  return { ...makeRecord({ at: epochMs, name, actionType: "gate_update" }), ...laTexts(epochMs) };
}

describe("completeness with --tz different from the server's zone", () => {
  it("checks the server days the period overlaps, labels the partial ones, recounts from the snapshot", async () => {
    const store = openStore(":memory:");
    try {
      insertRecords(store, [
        // 30 Sep 20:00 LA = 1 Oct 03:00 UTC: inside the UTC October report, on server day 30 Sep.
        laRecord(Date.UTC(2024, 9, 1, 3), "early"),
        laRecord(Date.UTC(2024, 9, 15, 12), "middle"),
        // 31 Oct 20:00 LA = 1 Nov 03:00 UTC: outside the report, still on server day 31 Oct.
        laRecord(Date.UTC(2024, 10, 1, 3), "late"),
      ]);
      // insertRecords derives server_day in UTC; the writer takes it from the date text.
      sqliteOf(store)
        .prepare("UPDATE audit_logs SET server_day = ? WHERE name = ?")
        .run("2024-09-30", "early");
      sqliteOf(store)
        .prepare("UPDATE audit_logs SET server_day = ? WHERE name = ?")
        .run("2024-10-31", "late");
      const coverage = sqliteOf(store).prepare(
        "INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, day_closed) VALUES ('all', ?, ?, ?, 0, 1)",
      );
      coverage.run("2024-09-30", 2, 2); // stored 2 at sync time; the snapshot holds 1
      coverage.run("2024-10-15", 1, 1);
      coverage.run("2024-10-31", 1, 1);
      const outDir = mkdtempSync(join(tmpdir(), "flagtrail-completeness-"));
      await writeReports({
        store,
        from: "2024-10-01",
        to: "2024-10-31",
        outDir,
        formats: ["md"],
        generatedAt: 0,
      });
      const md = readFileSync(join(outDir, "compliance_2024-10-01_2024-10-31.md"), "utf8");
      expect(md).toContain("(UTC-07:00, read from the records' time texts)");
      expect(md).toContain("The period overlaps the 32 server days 2024-09-30 to 2024-10-31.");
      expect(md).toContain(
        "Partly inside the period: 2024-09-30 (only from 2024-10-01T00:00:00+00:00 on), 2024-10-31 (only until 2024-11-01T00:00:00+00:00).",
      );
      expect(md).toContain("exists for 3 of these 32 server days. On 2 of them");
      expect(md).toContain("| 2024-09-30 | all | 2 | 1 | -1 | 2 |");
    } finally {
      store.close();
    }
  });
});

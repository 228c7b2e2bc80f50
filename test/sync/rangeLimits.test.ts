// The sync range's outer limits (issue 9): no end day after tomorrow, no start day before 2015 unless
// the caller allows it. One rule, in the engine's options; the CLI only maps --allow-before-2015.
import { describe, expect, it } from "vitest";
import { runSyncOptionsFrom } from "../../src/commands/sync.ts";
import { UsageError } from "../../src/errors.ts";
import { resolveSyncOptions } from "../../src/sync/options.ts";

const now = () => Date.parse("2026-03-10T23:30:00Z");

describe("sync range limits", () => {
  it("accepts tomorrow (UTC) as the end day and refuses the day after", () => {
    expect(resolveSyncOptions({ until: "2026-03-11" }, now).until).toBe("2026-03-11");
    expect(() => resolveSyncOptions({ until: "2026-03-12" }, now)).toThrow(UsageError);
    expect(() => resolveSyncOptions({ until: "2099-12-31" }, now)).toThrow(
      "The end day 2099-12-31 is after tomorrow (2026-03-11 in UTC): no records exist there yet.",
    );
  });

  it("refuses a start day before 2015 unless allowed, and never names a flag", () => {
    expect(resolveSyncOptions({ since: "2015-01-01" }, now).since).toBe("2015-01-01");
    expect(() => resolveSyncOptions({ since: "2014-12-31" }, now)).toThrow(
      /^The start day 2014-12-31 is before/,
    );
    expect(() => resolveSyncOptions({ since: "2014-12-31" }, now)).not.toThrow(/--/);
    expect(resolveSyncOptions({ since: "2014-12-31", allowBefore2015: true }, now).since).toBe("2014-12-31");
  });

  it("maps --allow-before-2015 onto the engine's option", () => {
    const base = { actionType: [], allowUnknownActionTypes: false, concurrency: 1, lookbackDays: 1 };
    const cli = { ...base, full: false, coverage: true, json: false, quiet: false };
    expect(runSyncOptionsFrom({ ...cli, allowBefore2015: true }).allowBefore2015).toBe(true);
    expect(runSyncOptionsFrom({ ...cli, allowBefore2015: false }).allowBefore2015).toBe(false);
  });

  it("reads the signing key in the command, never in the engine", () => {
    const saved = process.env.FLAGTRAIL_SIGNING_KEY;
    process.env.FLAGTRAIL_SIGNING_KEY = "key-from-env";
    try {
      expect(resolveSyncOptions({}, now).signingKey).toBeUndefined();
      const cli = { actionType: [], allowUnknownActionTypes: false, allowBefore2015: false, full: false };
      const options = runSyncOptionsFrom({ ...cli, coverage: true, json: false, quiet: false });
      expect(options.signingKey).toBe("key-from-env");
      expect(resolveSyncOptions(options, now).signingKey).toBe("key-from-env");
    } finally {
      if (saved === undefined) delete process.env.FLAGTRAIL_SIGNING_KEY;
      else process.env.FLAGTRAIL_SIGNING_KEY = saved;
    }
  });
});

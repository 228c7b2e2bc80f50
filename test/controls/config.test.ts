// The controls and sinks of flagtrail.config.json: strict (an unknown field is refused), each error
// naming its control or sink; a file with only controls is a valid config whose project is `default`.
import { describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { parseProjectsConfig } from "../../src/projects.ts";

const FILE = "flagtrail.config.json";
const parse = (body: unknown) => parseControlsConfig(JSON.stringify(body), FILE);
const failure = (body: unknown) => {
  try {
    parse(body);
  } catch (error) {
    return (error as Error & { exitCode?: number }).exitCode === 2
      ? (error as Error).message
      : `not usage: ${error}`;
  }
  return "accepted";
};

describe("controls in the config file", () => {
  it("accepts every kind with its parameters and fills defaults", () => {
    const { controls, sinks } = parse({
      controls: [
        {
          id: "cw",
          kind: "change-window",
          severity: "medium",
          days: ["mon"],
          hours: "08:00-18:00",
          zone: "Europe/Berlin",
        },
        { id: "fresh", kind: "sync-freshness", severity: "low", maxAgeHours: 26 },
      ],
      sinks: [{ name: "hook", kind: "webhook", url: "https://x.example/h", secretFile: "/run/secret" }],
    });
    expect(controls[0]).toMatchObject({ id: "cw", postReviewDays: 2 });
    expect(sinks[0]).toMatchObject({ name: "hook", backoffSeconds: 60 });
  });

  it("refuses what is wrong, naming the control or sink", () => {
    const base = { id: "cc81", severity: "high" };
    expect(failure({ controls: [{ ...base, kind: "review-required", entityPatern: "x" }] })).toBe(
      `${FILE}: control "cc81": unknown field entityPatern.`,
    );
    expect(failure({ controls: [{ ...base, kind: "integrity", entityPattern: "x" }] })).toBe(
      `${FILE}: control "cc81": unknown field entityPattern.`,
    );
    expect(failure({ controls: [{ ...base, kind: "ticket-reference", pattern: "[A-" }] })).toBe(
      `${FILE}: control "cc81": pattern: not a valid regular expression.`,
    );
    expect(
      failure({
        controls: [{ ...base, kind: "change-window", days: ["mon"], hours: "08:00-08:00", zone: "UTC" }],
      }),
    ).toBe(`${FILE}: control "cc81": hours: hours must not start and end at the same time.`);
    // A value outside its choices, or none, in the config's words (not zod's "Invalid option: …").
    expect(failure({ controls: [{ ...base, kind: "review-required", severity: "critical" }] })).toBe(
      `${FILE}: control "cc81": severity: must be low, medium or high, got "critical".`,
    );
    expect(failure({ controls: [{ id: "cc81", kind: "review-required" }] })).toBe(
      `${FILE}: control "cc81": severity: must be given (low, medium or high).`,
    );
    expect(
      failure({
        controls: [
          { ...base, kind: "change-window", days: ["mon", "mo"], hours: "08:00-18:00", zone: "UTC" },
        ],
      }),
    ).toBe(`${FILE}: control "cc81": days.1: must be sun, mon, tue, wed, thu, fri or sat, got "mo".`);
    expect(failure({ controls: [{ kind: "integrity", severity: "low" }] })).toBe(
      `${FILE}: control #1: id: must be given (a string).`,
    );
    expect(
      failure({
        controls: [
          { ...base, kind: "integrity" },
          { ...base, kind: "completeness" },
        ],
      }),
    ).toBe(`${FILE}: two controls have the id "cc81".`);
    expect(
      failure({
        sinks: [{ name: "hook", kind: "webhook", url: "https://x", secretEnv: "A", secretFile: "/b" }],
      }),
    ).toBe(`${FILE}: sink "hook": needs exactly one of secretEnv and secretFile.`);
    expect(failure({ sinks: [{ name: "hook", kind: "webhook", url: "https://x", secret: "s3cr3t" }] })).toBe(
      `${FILE}: sink "hook": unknown field secret.`,
    );
    expect(failure({ controls: [], extra: 1 })).toBe(`${FILE}: unknown key extra.`);
  });

  it("makes a file with only controls a config of the default project", () => {
    const text = JSON.stringify({ controls: [{ id: "i", kind: "integrity", severity: "high" }] });
    const projects = parseProjectsConfig(text, FILE, { FLAGTRAIL_API_KEY: "console-k" });
    expect(projects.map((p) => p.name)).toEqual(["default"]);
    expect(projects[0]?.readApiKey()).toBe("console-k");
  });
});

import { describe, expect, it } from "vitest";
import { createLogger } from "../src/log.ts";

describe("createLogger", () => {
  const fixedNow = () => new Date("2026-01-02T03:04:05.000Z");

  it("writes one JSON object per line with time, level, event and fields", () => {
    const lines: string[] = [];
    const log = createLogger({ json: true, write: (l) => lines.push(l), now: fixedNow });
    log.info("sync.end", { inserted: 3, error: new Error("boom") });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    expect(JSON.parse(lines[0]!)).toEqual({
      time: "2026-01-02T03:04:05.000Z",
      level: "info",
      event: "sync.end",
      inserted: 3,
      error: { name: "Error", message: "boom" },
    });
  });

  it("never prints a secret, in JSON or text form", () => {
    const key = "console-abcdef123456";
    const lines: string[] = [];
    for (const json of [true, false]) {
      const log = createLogger({ json, write: (l) => lines.push(l), secrets: [key], now: fixedNow });
      log.error("request.failed", { url: `https://x/?k=${key}`, message: `bad key ${key}` });
    }
    expect(lines.join("")).not.toContain(key);
    expect(lines.join("")).toContain("***");
    const awkward = 'console-"quoted"\\key';
    const jsonLines: string[] = [];
    createLogger({ json: true, write: (l) => jsonLines.push(l), secrets: [awkward] }).info("x", {
      key: awkward,
    });
    expect(jsonLines[0]).not.toContain("quoted");
    expect(lines[1]).toBe(
      "2026-01-02T03:04:05.000Z error request.failed url=https://x/?k=*** message=bad key ***\n",
    );
  });
});

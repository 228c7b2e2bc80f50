// Issue 26: the shipped systemd unit and timer, and the cron line of docs/operations.md. systemd reads
// only whole-line comments (a `# …` after a value becomes part of the value), so no value may carry
// one; the service must run unprivileged, take the key as a credential and be hardened.
// `systemd-analyze verify` checks them too where it is installed (apt-get install systemd).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const UNIT_DIR = join(ROOT, "contrib/systemd");
const UNITS = ["flagtrail.service", "flagtrail.timer"];

type Unit = Map<string, Map<string, string[]>>;

/** Sections → key → values (a key may repeat), and every value line that carries a trailing comment. */
function parseUnit(text: string): { unit: Unit; inlineComments: string[] } {
  const unit: Unit = new Map();
  const inlineComments: string[] = [];
  let section: Map<string, string[]> | undefined;
  for (const line of text.split("\n")) {
    if (line.trim() === "" || /^\s*[#;]/.test(line)) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1] ?? "", section);
      continue;
    }
    const m = /^(\w+)=(.*)$/.exec(line);
    if (!m || !section) throw new Error(`not a unit line: ${line}`);
    const [, key = "", value = ""] = m;
    if (/\s[#;]/.test(value) || /[#;]/.test(value.trim().at(0) ?? "")) inlineComments.push(line);
    section.set(key, [...(section.get(key) ?? []), value]);
  }
  return { unit, inlineComments };
}

const read = (name: string) => parseUnit(readFileSync(join(UNIT_DIR, name), "utf8"));

describe("contrib/systemd", () => {
  it("tells an inline comment from a whole-line one", () => {
    expect(parseUnit("[Service]\n# whole line\nType=oneshot  # not a comment\n").inlineComments).toEqual([
      "Type=oneshot  # not a comment",
    ]);
  });

  it.each(UNITS)("%s has no comment after a value", (name) => {
    expect(read(name).inlineComments).toEqual([]);
  });

  it("the service: unprivileged, the key as a credential, hardened, writing only its state directory", () => {
    const service = read("flagtrail.service").unit.get("Service");
    if (!service) throw new Error("no [Service] section");
    const one = (key: string) => service.get(key)?.[0];
    expect(one("User")).toBe("flagtrail");
    expect(one("Type")).toBe("oneshot");
    const credential = /^([\w-]+):\/\S+$/.exec(one("LoadCredential") ?? "")?.[1];
    expect(credential).toBe("flagtrail-api-key");
    const env = service.get("Environment") ?? [];
    expect(env).toContain(`FLAGTRAIL_API_KEY_FILE=%d/${credential}`);
    expect(env.join(" ")).not.toMatch(/FLAGTRAIL_API_KEY=/);
    for (const [key, value] of [
      ["ProtectSystem", "strict"],
      ["NoNewPrivileges", "yes"],
      ["PrivateTmp", "yes"],
      ["ProtectHome", "yes"],
    ])
      expect(one(key ?? ""), key).toBe(value);
    const writable = one("ReadWritePaths") ?? "";
    expect(writable).toBe("/var/lib/flagtrail");
    const db = env.find((e) => e.startsWith("FLAGTRAIL_DB="))?.slice("FLAGTRAIL_DB=".length) ?? "";
    const out = /--out (\S+)/.exec(one("ExecStart") ?? "")?.[1] ?? "";
    expect(db.startsWith(`${writable}/`)).toBe(true);
    expect(out.startsWith(`${writable}/`)).toBe(true);
    expect(one("ExecStart")).toMatch(/ flagtrail daemon --once /);
  });

  it("the timer: nightly, catching up a missed night, enabled by timers.target", () => {
    const { unit } = read("flagtrail.timer");
    expect(unit.get("Timer")?.get("OnCalendar")?.[0]).toMatch(/^\*-\*-\* \d\d:\d\d:\d\d/);
    expect(unit.get("Timer")?.get("Persistent")).toEqual(["true"]);
    expect(unit.get("Install")?.get("WantedBy")).toEqual(["timers.target"]);
  });

  const analyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
  const hasAnalyze = analyze.status === 0;

  it.runIf(hasAnalyze)("systemd-analyze verify accepts both units without a warning", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-units-"));
    for (const name of UNITS) copyFileSync(join(UNIT_DIR, name), join(dir, name));
    const result = spawnSync("systemd-analyze", ["verify", ...UNITS.map((n) => join(dir, n))], {
      encoding: "utf8",
      cwd: dir,
    });
    expect(result.status, result.stderr).toBe(0);
    // verify exits 0 on a value it ignores (an inline comment, say) but says so on stderr.
    expect(result.stderr).toBe("");
  });

  it.skipIf(hasAnalyze)("systemd-analyze is not installed here: `verify` of the units skipped", () => {});
});

describe("the cron line in docs/operations.md", () => {
  it("reads the key from a file, never holds the key itself", () => {
    const docs = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const cron = /```cron\n([\s\S]*?)```/.exec(docs)?.[1] ?? "";
    expect(cron).toMatch(/FLAGTRAIL_API_KEY_FILE=\S+ /);
    expect(cron).not.toMatch(/FLAGTRAIL_API_KEY=|console-/);
  });
});

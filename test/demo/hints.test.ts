// Issue 26: the demo's closing hints must work where the user is. `npx flagtrail` only works where
// flagtrail is a dependency (node_modules/.bin); elsewhere npx asks the registry (E404), and
// `npm run demo` only works in flagtrail's own checkout.
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { demoCommands } from "../../src/demo/hints.ts";

const quote = (word: string) => (/^[\w./-]+$/.test(word) ? word : `'${word}'`);

function installedScript(): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-hints-"));
  const script = join(dir, "pkg", "bin", "flagtrail.js");
  mkdirSync(join(dir, "pkg", "bin"), { recursive: true });
  writeFileSync(script, "#!/usr/bin/env node\n");
  chmodSync(script, 0o755);
  return { dir, script };
}

describe("the demo's hints", () => {
  it("in flagtrail's checkout: node bin/flagtrail.js and npm run demo", () => {
    const { dir, script } = installedScript();
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "flagtrail" }));
    expect(demoCommands({ cwd: dir, script, path: "" }, quote)).toEqual({
      flagtrail: "node bin/flagtrail.js",
      demo: "npm run demo",
    });
  });

  it("an installed bin run from an empty directory: the script's own path, never npx or npm run", () => {
    const { dir, script } = installedScript();
    const empty = mkdtempSync(join(tmpdir(), "flagtrail-empty-"));
    expect(demoCommands({ cwd: empty, script, path: "/usr/bin" }, quote)).toEqual({
      flagtrail: script,
      demo: `${script} demo`,
    });
    // Another project's package.json is not flagtrail's checkout.
    writeFileSync(join(empty, "package.json"), JSON.stringify({ name: "my-audits" }));
    expect(demoCommands({ cwd: empty, script, path: "" }, quote).flagtrail).toBe(script);
    chmodSync(script, 0o644);
    expect(demoCommands({ cwd: dir, script, path: "" }, quote).flagtrail).toBe(`node ${script}`);
  });

  it("flagtrail on PATH (global install, npm link): flagtrail; a dependency's bin: npx flagtrail", () => {
    const { dir, script } = installedScript();
    const binDir = join(dir, "global-bin");
    mkdirSync(binDir);
    symlinkSync(script, join(binDir, "flagtrail"));
    const cwd = mkdtempSync(join(tmpdir(), "flagtrail-empty-"));
    expect(
      demoCommands({ cwd, script: join(binDir, "flagtrail"), path: `/usr/bin:${binDir}` }, quote),
    ).toEqual({
      flagtrail: "flagtrail",
      demo: "flagtrail demo",
    });
    mkdirSync(join(cwd, "node_modules", ".bin"), { recursive: true });
    symlinkSync(script, join(cwd, "node_modules", ".bin", "flagtrail"));
    expect(demoCommands({ cwd, script, path: "/usr/bin" }, quote).flagtrail).toBe("npx flagtrail");
    // Run through npx, whose PATH holds node_modules/.bin (the user's shell does not): still npx flagtrail.
    const dotBin = join(cwd, "node_modules", ".bin");
    expect(demoCommands({ cwd, script, path: `${dotBin}:/usr/bin` }, quote).flagtrail).toBe("npx flagtrail");
  });
});

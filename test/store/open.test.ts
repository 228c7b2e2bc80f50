import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.ts";

describe("openStore", () => {
  it("applies the drizzle migrations to an in-memory database", () => {
    const store = openStore(":memory:");
    const tables = store.sqlite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual(
      expect.arrayContaining([
        "audit_logs",
        "audit_log_revisions",
        "quarantine",
        "sync_runs",
        "checkpoints",
        "coverage",
      ]),
    );
    store.close();
  });

  it("creates the file private, in WAL mode, with foreign keys on", () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-")), "t.db");
    const store = openStore(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(store.sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(store.sqlite.pragma("foreign_keys", { simple: true })).toBe(1);
    store.close();
  });
});

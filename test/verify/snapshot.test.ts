// Issue 13 item 2: verify during a sync read the meta head and the records at different moments and
// cried tampering. All of verify's reads now share one snapshot: here a second connection commits pages
// (records, quarantine, coverage, meta head and signature) between every part verify reads.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/open.ts";
import { type StorePart, verifyStore } from "../../src/verify/store.ts";
import { KEY, writeCoverageDays, writePage } from "./helpers.ts";

const open: Store[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

describe("verify while a sync writes", () => {
  it("checks one snapshot: pages committed between its reads are not seen, and not called tampering", async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-verify-snapshot-")), "store.db");
    const writer = openStore(dbPath);
    open.push(writer);
    await writePage(writer, 30, 2);
    await writeCoverageDays(writer, 10);
    const reader = openStore(dbPath, { readonly: true });
    open.push(reader);

    const parts: StorePart[] = [];
    const check = await verifyStore(reader, {
      signingKey: KEY,
      afterRead: async (part) => {
        parts.push(part);
        // The sync goes on: a page with new records and a quarantined one, and more coverage days.
        await writePage(writer, 7, 1);
        await writeCoverageDays(writer, 10 + parts.length);
      },
    });
    expect(parts).toEqual(["meta", "records", "revisions", "quarantine", "coverage"]);
    expect(check).toMatchObject({
      records: 30,
      head: { seq: 30 },
      quarantine: { rows: 2, digest: "matched" },
      coverage: { rows: 10, digest: "matched" },
      signature: "valid",
    });

    // What was written meanwhile is all there, and intact, for the next verify.
    expect(await verifyStore(reader, { signingKey: KEY })).toMatchObject({
      records: 30 + 5 * 7,
      quarantine: { rows: 2 + 5, digest: "matched" },
      coverage: { rows: 15, digest: "matched" },
      signature: "valid",
    });
  });
});

import { describe, expect, it } from "vitest";
import { freshDatabase, queryOnce } from "./cluster.ts";

describe("the test run's PostgreSQL cluster", () => {
  it("serves a fresh database per caller on 127.0.0.1, in UTF-8", async () => {
    const a = await freshDatabase();
    const b = await freshDatabase();
    expect(a).not.toBe(b);
    expect(new URL(a).hostname).toBe("127.0.0.1");
    const [row] = await queryOnce<{ db: string; enc: string; tables: string }>(
      a,
      "SELECT current_database() AS db, pg_encoding_to_char(encoding) AS enc, " +
        "(SELECT count(*) FROM pg_tables WHERE schemaname = 'public') AS tables " +
        "FROM pg_database WHERE datname = current_database()",
    );
    expect(row).toEqual({ db: new URL(a).pathname.slice(1), enc: "UTF8", tables: "0" });
  });
});

// Which config-edit record produced which stored version (src/diff/configHistory.ts).
import { describe, expect, it } from "vitest";
import { pairEditsWithVersions } from "../../src/diff/configHistory.ts";

const T0 = Date.UTC(2024, 5, 1, 12, 0, 0);

describe("pairEditsWithVersions", () => {
  const v = (version: number, at: number, modifier: string | null) => ({
    version,
    last_modified_time: at,
    last_modifier_id: modifier,
    raw: "{}",
  });
  const e = (id: string, at: number | null, user: string | null) => ({
    id,
    occurred_at: at,
    updated_by_user_id: user,
  });

  it("links by second and modifier; a tie pairs versions in order with records in listing order", () => {
    const pairs = pairEditsWithVersions(
      // Records in the order the link query gives them: oldest first within a second.
      [
        e("a", T0, "u1"),
        e("b", T0 + 999, "u1"),
        e("c", T0, "u2"),
        e("d", T0 + 1000, "u1"),
        e("x", null, "u1"),
      ],
      [v(3, T0 + 700, "u1"), v(4, T0 + 800, "u1"), v(5, T0 + 10, "u2"), v(6, T0 + 5000, "u1")],
    );
    expect(pairs).toEqual([
      ["a", 3],
      ["b", 4],
      ["c", 5],
    ]);
  });

  it("leaves a record unlinked when the modifier differs or the second does", () => {
    expect(pairEditsWithVersions([e("a", T0, "u1")], [v(1, T0 + 1000, "u1"), v(2, T0, "u9")])).toEqual([]);
  });
});

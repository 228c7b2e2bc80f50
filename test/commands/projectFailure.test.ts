// A project's own errors name it ("Project eu: …", for `--project eu` alone); over several projects the
// sentence names each failed project already, so the name once: "eu (the environment variable … )".
import { describe, expect, it } from "vitest";
import { describeFailure, throwIfFailed } from "../../src/commands/project.ts";
import { FlagtrailError } from "../../src/errors.ts";

describe("a failed project's reason", () => {
  it("names the project once in the sentence over several projects", () => {
    const unset = new FlagtrailError("Project eu: the environment variable K_EU is not set.");
    const outcomes = [
      { project: "web", ok: true as const, value: 1 },
      { project: "eu", ok: false as const, error: unset },
    ];
    expect(() => throwIfFailed(outcomes)).toThrow(
      /^1 of 2 projects failed: eu \(the environment variable K_EU is not set\)\.$/,
    );
    expect(describeFailure(unset, "eu")).toBe("the environment variable K_EU is not set.");
    // Another project's name, or none, leaves the message as it is.
    expect(describeFailure(unset, "web")).toBe(unset.message);
    expect(describeFailure(unset)).toBe(unset.message);
  });
});

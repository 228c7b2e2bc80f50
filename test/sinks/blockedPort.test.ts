// A sink on a port Node's fetch refuses (1, 25, 514, 6000, …): fetch throws a bare "TypeError: fetch
// failed" whose cause says "bad port". The reason recorded is that cause, never the URL's parts.
import { describe, expect, it } from "vitest";
import { parseControlsConfig, type SiemSink } from "../../src/controls/config.ts";
import { failureCause } from "../../src/controls/sinks/failure.ts";
import { postJson } from "../../src/controls/sinks/http.ts";
import { SinkError } from "../../src/errors.ts";
import { httpTransport } from "../../src/export/sinks/http.ts";

const SECRET_URL = "http://127.0.0.1:6000/services/T0SECRET/B0SECRET?token=s3cr3t";

describe("a sink on a port fetch blocks", () => {
  it("an alert sink records the cause, bad port, and no part of the URL", async () => {
    const failure = await postJson(SECRET_URL, "{}");
    expect(failure).toEqual({ reason: "bad port", sinkDown: true });
    const smtp = await postJson("http://127.0.0.1:25/hook", "{}");
    expect(smtp?.reason).toBe("bad port");
  });

  it("a SIEM sink says it could not be reached, and why", async () => {
    const config = { sinks: [{ name: "siem", kind: "http", url: SECRET_URL }] };
    const sink = parseControlsConfig(JSON.stringify(config), "test.json").sinks[0] as SiemSink & {
      kind: "http";
    };
    const error = await httpTransport(sink)
      .send([{ id: "default:r1", line: "{}" }])
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect((error as SinkError).message).toBe('sink "siem" could not be reached (bad port).');
  });

  it("a cause that quotes the URL, or is more than plain words, is not used", () => {
    const failed = (message: string) => new TypeError("fetch failed", { cause: new Error(message) });
    expect(failureCause(failed("no route to services"), SECRET_URL)).toBe("TypeError");
    expect(failureCause(failed("refused by T0SECRET"), SECRET_URL)).toBe("TypeError");
    expect(failureCause(failed("see http://127.0.0.1:6000/x"), SECRET_URL)).toBe("TypeError");
    expect(failureCause(failed("bad port"), SECRET_URL)).toBe("bad port");
    const coded = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    expect(failureCause(new TypeError("fetch failed", { cause: coded }), SECRET_URL)).toBe("ECONNREFUSED");
  });
});

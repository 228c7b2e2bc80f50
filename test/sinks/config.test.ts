// The SIEM sinks in flagtrail.config.json: strict like the rest, each error naming the sink; a secret
// can only be named (an environment variable, a file), never written in the config.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { syncedTestStore } from "../helpers/simSync.ts";

const FILE = "flagtrail.config.json";
const failure = (sink: unknown) => {
  try {
    parseControlsConfig(JSON.stringify({ sinks: [sink] }), FILE);
  } catch (error) {
    return (error as Error & { exitCode?: number }).exitCode === 2
      ? (error as Error).message
      : `not usage: ${error}`;
  }
  return "accepted";
};

describe("SIEM sinks in the config file", () => {
  it("accepts each kind and fills its defaults", () => {
    const { sinks } = parseControlsConfig(
      JSON.stringify({
        sinks: [
          {
            name: "splunk",
            kind: "splunk-hec",
            url: "https://splunk.example:8088",
            tokenEnv: "SPLUNK_HEC_TOKEN",
          },
          {
            name: "datadog",
            kind: "http",
            url: "https://http-intake.logs.datadoghq.eu/api/v2/logs",
            headersEnv: { "DD-API-KEY": "DD_API_KEY" },
            compress: true,
          },
          { name: "rsyslog", kind: "syslog", url: "tls://siem.example:6514", caFile: "/etc/ssl/siem-ca.pem" },
        ],
      }),
      FILE,
    );
    expect(sinks[0]).toMatchObject({
      useAck: true,
      sourcetype: "ocsf:flagtrail",
      batchSize: 500,
      format: "ocsf",
    });
    expect(sinks[1]).toMatchObject({ compress: true, headersEnv: { "DD-API-KEY": "DD_API_KEY" } });
    expect(sinks[2]).toMatchObject({ kind: "syslog", url: "tls://siem.example:6514" });
  });

  it("refuses what is wrong, naming the sink", () => {
    const hec = { name: "splunk", kind: "splunk-hec", url: "https://s.example:8088" };
    expect(failure({ ...hec, tokenEnv: "T", token: "abc123" })).toBe(
      'flagtrail.config.json: sink "splunk": unknown field token.',
    );
    expect(failure(hec)).toBe(
      'flagtrail.config.json: sink "splunk": needs exactly one of tokenEnv and tokenFile.',
    );
    expect(failure({ ...hec, tokenEnv: "T", tokenFile: "/t" })).toBe(
      'flagtrail.config.json: sink "splunk": needs exactly one of tokenEnv and tokenFile.',
    );
    expect(failure({ name: "s", kind: "syslog", url: "udp://h:514" })).toBe(
      'flagtrail.config.json: sink "s": url: url must be tcp://host:port or tls://host:port.',
    );
    expect(
      failure({ name: "d", kind: "http", url: "https://x.example", headersEnv: { "DD-API-KEY": "dd key" } }),
    ).toBe('flagtrail.config.json: sink "d": headersEnv.DD-API-KEY: not an environment variable name.');
    // Credentials in a URL are a secret in the config (and fetch refused them only at delivery).
    for (const sink of [
      { name: "d", kind: "http", url: "https://user:s3cret@logs.example/in" },
      { name: "d", kind: "webhook", url: "http://s3cret@hooks.example/x", secretEnv: "S" },
    ]) {
      const message = failure(sink);
      expect(message).toBe(
        'flagtrail.config.json: sink "d": url: url must not hold a user name or password: give credentials from the environment (headersEnv).',
      );
      expect(message).not.toContain("s3cret");
    }
    expect(failure({ name: "d", kind: "http", url: "https://logs.example/in?to=a@b" })).toBe("accepted");
    expect(failure({ name: "k", kind: "kafka", url: "x" })).toBe(
      'flagtrail.config.json: sink "k": kind: must be one of webhook, slack, exec, splunk-hec, http, syslog.',
    );
  });
});

// review h62: a syslog url whose port is not one (0, above 65535) passed the config's pattern and failed
// only at delivery, as `unexpected error: Invalid URL` (exit 1) instead of a config error naming the sink.
describe("a syslog sink's port", () => {
  let sim: RunningSimulator | undefined;

  afterAll(async () => {
    await sim?.close();
  });

  it("is refused with the config, naming the sink", async () => {
    for (const url of ["tcp://siem.example:70000", "tls://[::1]:0"]) {
      expect(failure({ name: "rsys", kind: "syslog", url })).toBe(
        'flagtrail.config.json: sink "rsys": url: url must be tcp://host:port or tls://host:port.',
      );
    }
    expect(failure({ name: "rsys", kind: "syslog", url: "tcp://siem.example:65535" })).toBe("accepted");
    let db: string;
    ({ sim, db } = await syncedTestStore());
    const config = join(dirname(db), "syslog.json");
    writeFileSync(
      config,
      JSON.stringify({ sinks: [{ name: "rsys", kind: "syslog", url: "tcp://127.0.0.1:70000" }] }),
    );
    const run = await runCliInProcess(["export", "--sink", "rsys", "--db", db, "--config", config]);
    expect(run.stderr).toBe(
      `flagtrail: ${config}: sink "rsys": url: url must be tcp://host:port or tls://host:port.\n`,
    );
    expect(run.code).toBe(2);
  });
});

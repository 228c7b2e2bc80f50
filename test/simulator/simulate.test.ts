// `flagtrail simulate`: help, flag validation (exit 2), flags mapped onto the simulator's options,
// and a real spawned process that prints its address, serves, and stops on SIGTERM.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { buildProgram, main } from "../../src/cli.ts";
import { simulatorOptionsFromFlags } from "../../src/commands/simulate.ts";
import { CLI_PATH, cliEnv } from "../helpers/runCli.ts";

describe("flagtrail simulate", () => {
  it("documents its flags in --help", () => {
    const help = buildProgram()
      .commands.find((c) => c.name() === "simulate")!
      .helpInformation();
    for (const flag of [
      "--port",
      "--api-key",
      "--seed",
      "--records",
      "--days",
      "--tz",
      "--rate-limit",
      "--no-retry-after",
      "--error-rate",
      "--latency",
      "--jitter",
      "--reset-rate",
      "--truncate-rate",
      "--max-page-size",
      "--malformed-rate",
      "--mutate-rate",
      "--head-insert-rate",
      "--max-limit",
      "--over-limit",
      "--error-status",
      "--throttle-rate",
      "--non-json-rate",
      "--html-error-rate",
      "--wrong-envelope",
      "--lying-total",
      "--repeating-page",
    ]) {
      expect(help, flag).toContain(flag);
    }
  });

  it("rejects bad flags with exit code 2 and a message naming the flag", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      for (const [args, text] of [
        [["--port", "eighty"], "--port"],
        [["--tz", "Mars/Olympus"], "--tz"],
        [["--error-rate", "1.5"], "--error-rate"],
        [["--rate-limit-windows", "10 per s"], "--rate-limit-windows"],
        [["--no-retry-after"], "--no-retry-after"],
        [["--error-status", "418"], "--error-status"],
        [["--lying-total", "-3"], "--lying-total"],
        [["--max-limit", "0"], "--max-limit"],
        [["--over-limit", "drop"], "--over-limit"],
      ] as const) {
        stderr.mockClear();
        expect(await main(["node", "flagtrail", "simulate", ...args]), args.join(" ")).toBe(2);
        expect(stderr.mock.calls.map((c) => String(c[0])).join("")).toContain(text);
      }
    } finally {
      stderr.mockRestore();
    }
    // The same through the real binary, once.
    const result = spawnSync(process.execPath, [CLI_PATH, "simulate", "--port", "eighty"], {
      encoding: "utf8",
      env: cliEnv(),
    });
    expect(result.status).toBe(2);
  });

  it("maps flags onto startSimulator options", async () => {
    const program = buildProgram();
    const command = program.commands.find((c) => c.name() === "simulate")!;
    let captured: Record<string, unknown> = {};
    command.action((raw: Record<string, unknown>) => {
      captured = raw;
    });
    await program.parseAsync(
      [
        "simulate",
        "--port=4010",
        "--seed=5",
        "--records=10",
        "--days=95",
        "--tz=Europe/Berlin",
        "--now=2024-04-01T00:00:00Z",
        "--rate-limit-windows=3/10s,20/15m",
        "--no-retry-after",
        "--error-rate=0.25",
        "--latency=5",
        "--jitter=7",
        "--max-page-size=50",
        "--head-insert-rate=0.5",
      ],
      { from: "user" },
    );
    const { parseOptions } = await import("../../src/commands/options.ts");
    const { simulateOptionsSchema } = await import("../../src/commands/simulate.ts");
    const options = simulatorOptionsFromFlags(parseOptions(simulateOptionsSchema, captured));
    expect(options).toMatchObject({
      host: "127.0.0.1",
      port: 4010,
      seed: 5,
      records: 10,
      days: 95,
      timeZone: "Europe/Berlin",
      now: Date.UTC(2024, 3, 1),
      maxPageSize: 50,
      faults: {
        rateLimit: {
          retryAfter: false,
          windows: [
            { limit: 3, windowMs: 10_000 },
            { limit: 20, windowMs: 900_000 },
          ],
        },
        errorRate: 0.25,
        latencyMs: 5,
        jitterMs: 7,
        headInsertRate: 0.5,
      },
    });
  });

  it("maps the page-size maximum and the bad-server flags onto startSimulator options", async () => {
    const program = buildProgram();
    const command = program.commands.find((c) => c.name() === "simulate")!;
    let captured: Record<string, unknown> = {};
    command.action((raw: Record<string, unknown>) => {
      captured = raw;
    });
    await program.parseAsync(
      [
        "simulate",
        "--max-limit=500",
        "--over-limit=reject",
        "--error-rate=1",
        "--error-status=503",
        "--throttle-rate=1",
        "--non-json-rate=0.5",
        "--html-error-rate=0.25",
        "--wrong-envelope",
        "--lying-total=40",
        "--repeating-page",
      ],
      { from: "user" },
    );
    const { parseOptions } = await import("../../src/commands/options.ts");
    const { simulateOptionsSchema } = await import("../../src/commands/simulate.ts");
    const options = simulatorOptionsFromFlags(parseOptions(simulateOptionsSchema, captured));
    expect(options).toMatchObject({
      maxLimit: 500,
      overLimit: "reject",
      faults: {
        errorRate: 1,
        errorStatus: 503,
        throttleRate: 1,
        nonJson200Rate: 0.5,
        htmlErrorRate: 0.25,
        wrongEnvelope: true,
        lyingTotal: 40,
        repeatingPage: true,
      },
    });
  });

  it("prints its address, serves the audit log with the given key, and stops on SIGTERM", async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        CLI_PATH,
        "simulate",
        "--records",
        "40",
        "--days",
        "30",
        "--seed",
        "3",
        "--api-key",
        "console-spawned-key",
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: cliEnv() },
    );
    try {
      let out = "";
      child.stdout!.setEncoding("utf8");
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout!.on("data", (chunk: string) => {
          out += chunk;
          const found = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (found) resolve(found[1]!);
        });
        child.once("exit", (code) => reject(new Error(`exited early with ${code}: ${out}`)));
      });
      expect(out).not.toContain("console-spawned-key");
      const response = await fetch(`${line}/console/v1/audit_logs?limit=100`, {
        headers: { "STATSIG-API-KEY": "console-spawned-key" },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { pagination: { totalItems: number } };
      expect(body.pagination.totalItems).toBe(40);
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

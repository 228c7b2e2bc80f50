// The simulator keeps idle keep-alive sockets open longer than the client ever does (issue 26: three
// "retry: … connection failed (UND_ERR_SOCKET)" against a healthy local simulator under load). Node's
// default of 5 s raced a client whose event loop was busy in a long commit: its queued requests went
// out on sockets the server had just closed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";

/** undici's keepAliveMaxTimeout in src/api/consoleClient.ts: the client's longest idle time. */
const CLIENT_MAX_IDLE_S = 60;

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ host: "127.0.0.1", port: 0, seed: 3, records: 10 });
});
afterAll(() => sim.close());

describe("simulator keep-alive", () => {
  it("advertises an idle timeout longer than the client's longest", async () => {
    const response = await fetch(`${sim.url}/console/v1/audit_logs?limit=1`, {
      headers: { [sim.settings.authHeader]: sim.settings.apiKey },
    });
    await response.text();
    expect(response.status).toBe(200);
    const timeout = Number(/timeout=(\d+)/.exec(response.headers.get("keep-alive") ?? "")?.[1]);
    expect(timeout).toBeGreaterThan(CLIENT_MAX_IDLE_S);
  });
});

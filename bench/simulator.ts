// Simulator benchmark: generating 1,000,000 records, then serving audit log pages from the top and
// from deep in the list. A page must cost O(log n + page size), so the page-9000 / page-1 ratio
// should stay near 1 (it would be in the hundreds with a scan or a sort per request).
import { buildSimulator } from "../src/simulator/index.ts";
import type { SimRequest } from "../src/simulator/types.ts";

const RECORDS = 1_000_000;
const REPEAT = 200;

function request(query: string): SimRequest {
  return {
    method: "GET",
    pathname: "/console/v1/audit_logs",
    query: new URLSearchParams(query),
    headers: { host: "127.0.0.1" },
    body: undefined,
  };
}

export async function benchSimulator(): Promise<Record<string, number>> {
  const now = Date.UTC(2024, 3, 15, 19);
  const started = performance.now();
  const sim = buildSimulator({ records: RECORDS, seed: 1, now });
  const generationMs = performance.now() - started;
  const heapMb = process.memoryUsage().heapUsed / 1e6;
  const route = sim.apiRoutes[0]!;

  // The whole history in one window so page 9000 of 100 exists; sorted by time (the common case).
  const all = "startDate=2023-01-01&endDate=2024-12-31&limit=100";
  const perPage = (query: string): number => {
    for (let i = 0; i < 20; i++) JSON.stringify(route.handle(request(query), []).body); // warm up
    const t = performance.now();
    for (let i = 0; i < REPEAT; i++) {
      const response = route.handle(request(query), []);
      if (response.status !== 200) throw new Error(`bench query failed: ${response.status}`);
      JSON.stringify(response.body);
    }
    return (performance.now() - t) / REPEAT;
  };
  const page1Ms = perPage(`${all}&page=1`);
  const page9000Ms = perPage(`${all}&page=9000`);
  const typed = `${all}&actionTypes=gate_update`;
  const typedPage1Ms = perPage(`${typed}&page=1`);
  const typedDeepMs = perPage(`${typed}&page=500`);
  return {
    records: sim.store.size,
    generationMs: Math.round(generationMs),
    heapMb: Math.round(heapMb),
    page1Ms,
    page9000Ms,
    page9000ToPage1Ratio: page9000Ms / page1Ms,
    actionTypePage1Ms: typedPage1Ms,
    actionTypePage500Ms: typedDeepMs,
    actionTypeDeepToPage1Ratio: typedDeepMs / typedPage1Ms,
  };
}

// startSimulator: the console API simulator used by tests, the demo, the benchmark and
// `flagtrail simulate`. See docs/simulator.md for options and faults.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { AUDIT_LOGS_PATH } from "../api/requestPaths.ts";
import { handleAuditLogs } from "./auditRoute.ts";
import { AuditStore } from "./auditStore.ts";
import { controlRoutes, createControl, type SimulatorControl } from "./control.ts";
import { Counters } from "./counters.ts";
import { createEntityWorld, type EntityControl } from "./entities/index.ts";
import { FaultEngine } from "./faults.ts";
import { HistoryGenerator } from "./history/generator.ts";
import { type SimulatorOptions, type SimulatorSettings, simulatorOptionsSchema } from "./options.ts";
import { createSimServer } from "./server.ts";
import type { AuditAppender, HistoryObserver, SimRoute } from "./types.ts";
import { ZonedClock } from "./zonedTime.ts";

export type { AppendInput } from "./control.ts";
export type { SimCounters } from "./counters.ts";

export type { QueuedFault } from "./faults.ts";
export type { FaultsInput, SimulatorOptions } from "./options.ts";

export interface RunningSimulator {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** The validated options with defaults filled in (holds the key: never log it). */
  settings: SimulatorSettings;
  control: SimulatorControl;
  /** Test powers over the entity routes (config versions, experiments, scopes). */
  entities: EntityControl;
  close(): Promise<void>;
}

/**
 * Everything but the socket: the store filled with the seeded history, the routes and the control
 * handle. Split out so the benchmark can measure generation without HTTP.
 */
export function buildSimulator(options: SimulatorOptions = {}) {
  const settings = simulatorOptionsSchema.parse(options);
  if (settings.maxPageSize !== undefined && settings.faults.maxPageSize === undefined) {
    settings.faults.maxPageSize = settings.maxPageSize;
  }
  // The clock starts at `now` and runs in real time; tests may push it forward.
  const startNow = settings.now ?? Date.now();
  const startedAt = performance.now();
  let skew = 0;
  const now = () => startNow + Math.floor(performance.now() - startedAt) + skew;
  const advanceClock = (ms: number) => {
    skew += ms;
  };

  const clock = new ZonedClock(settings.timeZone, settings.dateStyle);
  const store = new AuditStore(clock);
  const counters = new Counters();
  const faults = new FaultEngine(settings.seed, settings.faults, counters, now);

  // The entity world needs the appender before the generator exists, and the generator needs the
  // world's observer: the appender reaches the generator lazily.
  let generator: HistoryGenerator | undefined;
  const appender: AuditAppender = {
    append(entry) {
      const record = store.append({
        id: generator!.recordId(store),
        at: entry.at,
        name: entry.name,
        actionType: entry.actionType,
        changeLog: entry.changeLog,
        actor: entry.actor,
        ...(entry.changes === undefined ? {} : { changes: entry.changes }),
        ...(entry.tags === undefined ? {} : { tags: entry.tags }),
      });
      return store.render(record);
    },
  };
  const world = createEntityWorld({
    appender,
    now,
    seed: settings.seed,
    serverSecret: settings.serverSecret,
  });
  const observer: HistoryObserver = world.observer;
  generator = new HistoryGenerator(settings.seed, observer, settings.idSeed);
  generator.fill(store, {
    records: settings.records,
    days: settings.days,
    endAt: startNow,
    // The team keeps office hours in the project's zone, the one the server writes dates in.
    offsetMinutes: (at) => clock.offsetMinutes(at),
    configRate: settings.configRate,
  });

  const history = generator;
  const auditRoute: SimRoute = {
    method: "GET",
    pattern: new RegExp(`^${AUDIT_LOGS_PATH}/?$`),
    auth: "console",
    handle: (request) =>
      handleAuditLogs(request, {
        store,
        clock,
        faults,
        counters,
        now,
        linkStyle: settings.linkStyle,
        maxLimit: settings.maxLimit,
        overLimit: settings.overLimit,
        insertAtHead: (count) => history.extend(store, count, now()),
      }),
  };
  const control = createControl({ store, generator, counters, faults, now, advanceClock });
  return {
    settings,
    store,
    control,
    entities: world.control,
    counters,
    faults,
    apiRoutes: [auditRoute, ...world.routes],
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const built = buildSimulator(options);
  const { settings } = built;
  const server = createSimServer({
    apiKey: settings.apiKey,
    serverSecret: settings.serverSecret,
    authHeader: settings.authHeader,
    apiRoutes: built.apiRoutes,
    controlRoutes: controlRoutes(built.control),
    faults: built.faults,
    counters: built.counters,
  });
  server.listen(settings.port, settings.host);
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  return {
    url: `http://${host}:${port}`,
    port,
    settings,
    control: built.control,
    entities: built.entities,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets of a pooled client would hold close() open forever.
        server.closeAllConnections();
      }),
  };
}

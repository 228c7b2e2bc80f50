// Request counters the control routes expose, so tests can assert on what a client really sent.

const LAST_QUERIES = 50;

export interface SimCounters {
  /** Requests per `METHOD /path`, control routes excluded. */
  requests: Record<string, number>;
  /** Responses per status code. */
  statuses: Record<string, number>;
  /** 429 responses sent. */
  throttled: number;
  faults: {
    serverError: number;
    reset: number;
    truncate: number;
    clamp: number;
    malformed: number;
    mutate: number;
    headInsert: number;
    htmlError: number;
    throttle: number;
    nonJson200: number;
    wrongEnvelope: number;
    lyingTotal: number;
    repeatingPage: number;
    /** Fresh-id records served by the endless mode (also the sequence of their ids). */
    endlessFreshIds: number;
  };
  /** Query strings of the latest audit log requests, oldest first. */
  lastQueries: string[];
}

export type FaultName = keyof SimCounters["faults"];

function fresh(): SimCounters {
  return {
    requests: {},
    statuses: {},
    throttled: 0,
    faults: {
      serverError: 0,
      reset: 0,
      truncate: 0,
      clamp: 0,
      malformed: 0,
      mutate: 0,
      headInsert: 0,
      htmlError: 0,
      throttle: 0,
      nonJson200: 0,
      wrongEnvelope: 0,
      lyingTotal: 0,
      repeatingPage: 0,
      endlessFreshIds: 0,
    },
    lastQueries: [],
  };
}

export class Counters {
  private state = fresh();

  request(label: string): void {
    this.state.requests[label] = (this.state.requests[label] ?? 0) + 1;
  }

  status(code: number): void {
    this.state.statuses[code] = (this.state.statuses[code] ?? 0) + 1;
    if (code === 429) this.state.throttled++;
  }

  fault(name: FaultName, count = 1): void {
    this.state.faults[name] += count;
  }

  /** One fault's count so far (without copying the whole state). */
  snapshotFault(name: FaultName): number {
    return this.state.faults[name];
  }

  query(queryString: string): void {
    this.state.lastQueries.push(queryString);
    if (this.state.lastQueries.length > LAST_QUERIES) this.state.lastQueries.shift();
  }

  snapshot(): SimCounters {
    return structuredClone(this.state);
  }

  reset(): void {
    this.state = fresh();
  }
}

// Builders of audit log records shaped like the real service's (toDateString/toTimeString in UTC).
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const pad = (n: number) => String(n).padStart(2, "0");

export function utcDateText(at: number): string {
  const d = new Date(at);
  return `${WEEKDAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()}`;
}

export function utcTimeText(at: number): string {
  const d = new Date(at);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`;
}

export interface TestRecord {
  id: string;
  name: string;
  changeLog: string;
  actionType: string;
  date: string;
  time: string;
  updatedBy: string;
  updatedByUserID: string;
  modifierEmail: string;
  changes: Record<string, unknown>;
  tags: string[];
  [extra: string]: unknown;
}

let counter = 0;

/** A valid record at instant `at`; ids are unique per process unless given. */
export function makeRecord(at: number, overrides: Partial<TestRecord> = {}): TestRecord {
  counter += 1;
  return {
    id: `rec${String(counter).padStart(19, "0")}`,
    name: `gate_${counter % 7}`,
    changeLog: "Updated rules",
    actionType: "gate_update",
    date: utcDateText(at),
    time: utcTimeText(at),
    updatedBy: "Ada Lovelace",
    updatedByUserID: "user0000000000000001",
    modifierEmail: "ada@example.com",
    changes: {},
    tags: [],
    ...overrides,
  };
}

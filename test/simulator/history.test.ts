// The seeded history generator: determinism, coverage of the action types and rule diff cases the
// reports need, internal consistency, bursts, awkward names, and what the entity side is told.
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditRule } from "../../src/api/schemas.ts";
import { AuditStore } from "../../src/simulator/auditStore.ts";
import { HistoryGenerator } from "../../src/simulator/history/generator.ts";
import { buildSimulator } from "../../src/simulator/index.ts";
import type { HistoryObserver, SimAuditRecord } from "../../src/simulator/types.ts";
import { ZonedClock } from "../../src/simulator/zonedTime.ts";

const NOW = Date.UTC(2024, 5, 1, 12);
const DAY = 86_400_000;

interface Generated {
  records: SimAuditRecord[];
  instants: number[];
  configEvents: Parameters<HistoryObserver["configChanged"]>[0][];
  experimentEvents: Parameters<HistoryObserver["experimentChanged"]>[0][];
}

function generate(seed: number, records: number, days = 120, configRate?: number): Generated {
  const store = new AuditStore(new ZonedClock("America/Los_Angeles"));
  const out: Generated = { records: [], instants: [], configEvents: [], experimentEvents: [] };
  const generator = new HistoryGenerator(seed, {
    configChanged: (event) => out.configEvents.push(event),
    experimentChanged: (event) => out.experimentEvents.push(event),
    layerCreated: () => {},
  });
  generator.fill(store, { records, days, endAt: NOW, ...(configRate === undefined ? {} : { configRate }) });
  for (let i = 0; i < store.size; i++) {
    const record = store.at(i)!;
    out.records.push(store.render(record));
    out.instants.push(record.at);
  }
  return out;
}

type Rules = { old: AuditRule[]; new: AuditRule[] };
const rulesOf = (record: SimAuditRecord): Rules | undefined => (record.changes as { rules?: Rules }).rules;

/** Every diff case a pair of rule lists shows, named the way the issue names them. */
function diffCases(old: AuditRule[], next: AuditRule[]): Set<string> {
  const cases = new Set<string>();
  const oldIds = old.map((r) => r.id);
  const newIds = next.map((r) => r.id);
  if (newIds.some((id) => !oldIds.includes(id))) cases.add("rule added");
  if (oldIds.some((id) => !newIds.includes(id))) cases.add("rule removed");
  const common = newIds.filter((id) => oldIds.includes(id));
  if (common.join() !== oldIds.filter((id) => newIds.includes(id)).join()) cases.add("rule reordered");
  for (const rule of next) {
    const before = old.find((r) => r.id === rule.id);
    if (before === undefined) continue;
    if (before.percentagePass !== rule.percentagePass) cases.add("pass percentage");
    const a = before.conditionJSON ?? [];
    const b = rule.conditionJSON ?? [];
    if (b.length > a.length) cases.add("condition added");
    if (b.length < a.length) cases.add("condition removed");
    if (b.length === a.length && JSON.stringify(a) !== JSON.stringify(b)) cases.add("condition changed");
    if (before.returnValueJSON !== rule.returnValueJSON) cases.add("return value");
    const envA = before.enabledEnvironments ?? [];
    const envB = rule.enabledEnvironments ?? [];
    if (envB.some((e) => !envA.includes(e))) cases.add("environment enabled");
    if (envA.some((e) => !envB.includes(e))) cases.add("environment disabled");
    if (before.salt !== rule.salt) cases.add("resalt");
  }
  return cases;
}

let history: Generated;
beforeAll(() => {
  history = generate(11, 5000);
});

describe("history generator", () => {
  it("is deterministic from the seed and differs between seeds", () => {
    const again = generate(11, 5000);
    expect(again.records).toEqual(history.records);
    const other = generate(12, 5000);
    expect(other.records.map((r) => r.id)).not.toEqual(history.records.map((r) => r.id));
    // The same through startSimulator's builder, entity world included.
    const a = buildSimulator({ records: 500, seed: 5, now: NOW });
    const b = buildSimulator({ records: 500, seed: 5, now: NOW });
    const ids = (sim: ReturnType<typeof buildSimulator>) =>
      Array.from({ length: sim.store.size }, (_, i) => sim.store.render(sim.store.at(i)!));
    expect(ids(a)).toEqual(ids(b));
  });

  it("spreads N records over D days ending before now, sorted, with more than 90 days", () => {
    expect(history.records).toHaveLength(5000);
    expect(history.instants).toEqual([...history.instants].sort((x, y) => x - y));
    expect(history.instants[0]!).toBeGreaterThanOrEqual(NOW - 120 * DAY);
    expect(history.instants[0]!).toBeLessThan(NOW - 100 * DAY);
    expect(history.instants.at(-1)!).toBeLessThan(NOW);
    expect(new Set(history.records.map((r) => r.id)).size).toBe(5000);
  });

  it("contains the experiment, config, gate, review and login actions", () => {
    const types = new Set(history.records.map((r) => r.actionType));
    for (const type of [
      "experiment_create",
      "experiment_start",
      "schedule_experiment_start",
      "experiment_pause_assignment",
      "experiment_decision_make",
      "experiment_abandon",
      "archive_experiment",
      "experiment_restart",
      "dynamic_config_create",
      "config_conditions_update",
      "config_default_value_update",
      "config_state_toggle",
      "config_environments_update",
      "config_resalt",
      "config_revert",
      "config_add_tag",
      "gate_create",
      "gate_update",
      "experiment_review_create",
      "experiment_review_accept",
      "experiment_review_reject",
      "config_review_create",
      "config_review_accept",
      "config_review_reject",
      "experiment_update_owners",
      "dynamic_config_update_owners",
      "user_login",
    ]) {
      expect(types, type).toContain(type);
    }
  });

  it("covers every rule diff case, and each edit's old rules are the previous edit's new ones", () => {
    const seen = new Set<string>();
    const lastRules = new Map<string, AuditRule[]>();
    // Collected, then compared once each (an expect per rule and condition was 11,000 expect calls).
    const oldRules: AuditRule[][] = [];
    const previousNewRules: AuditRule[][] = [];
    const badIds: string[] = [];
    const badConditions: unknown[] = [];
    const badReturnValues: unknown[] = [];
    for (const record of history.records) {
      const rules = rulesOf(record);
      if (rules === undefined) continue;
      for (const c of diffCases(rules.old, rules.new)) seen.add(c);
      oldRules.push(rules.old);
      previousNewRules.push(lastRules.get(record.name) ?? []);
      lastRules.set(record.name, rules.new);
      for (const rule of rules.new) {
        if (!/^[A-Za-z0-9]{20}$/.test(rule.id)) badIds.push(rule.id);
        for (const condition of rule.conditionJSON ?? []) {
          if (!Number.isInteger(condition.conditionType) || !Number.isInteger(condition.operator)) {
            badConditions.push(condition);
          }
        }
        try {
          JSON.parse(rule.returnValueJSON!);
        } catch {
          badReturnValues.push(rule.returnValueJSON);
        }
      }
    }
    expect(oldRules).toEqual(previousNewRules);
    expect(badIds).toEqual([]);
    expect(badConditions).toEqual([]);
    expect(badReturnValues).toEqual([]);
    expect([...seen].sort()).toEqual(
      [
        "pass percentage",
        "condition added",
        "condition removed",
        "condition changed",
        "return value",
        "environment enabled",
        "environment disabled",
        "rule added",
        "rule removed",
        "rule reordered",
        "resalt",
      ].sort(),
    );
  });

  it("moves experiments only along allowed transitions", () => {
    const allowed: Record<string, string[]> = {
      experiment_create: ["none"],
      schedule_experiment_start: ["setup"],
      experiment_start: ["setup"],
      experiment_pause_assignment: ["active"],
      experiment_decision_make: ["active", "assignment_stopped"],
      experiment_abandon: ["active", "assignment_stopped"],
      experiment_restart: ["assignment_stopped", "decision_made", "abandoned"],
      archive_experiment: ["decision_made", "abandoned"],
    };
    const status = new Map<string, string>();
    let moves = 0;
    for (const event of history.experimentEvents) {
      const before = status.get(event.experimentId) ?? "none";
      expect(allowed[event.actionType], `${event.actionType} from ${before}`).toContain(before);
      status.set(event.experimentId, event.status);
      moves++;
    }
    const logged = history.records.filter((r) => r.actionType in allowed).length;
    expect(moves).toBe(logged);
  });

  it("reports every config change to the observer with the rules the log shows", () => {
    const configTypes = new Set(history.configEvents.map((e) => e.actionType));
    const logged = history.records.filter(
      (r) => configTypes.has(r.actionType) && !r.actionType.includes("review"),
    );
    expect(history.configEvents.length).toBe(logged.length);
    history.configEvents.forEach((event, i) => {
      const record = logged[i]!;
      expect(record.name).toBe(event.name);
      expect(record.actionType).toBe(event.actionType);
      const rules = rulesOf(record);
      if (rules !== undefined) expect(event.rules).toEqual(rules.new);
      expect(event.configId).toMatch(/^[A-Za-z0-9]{22}$/);
    });
  });

  it("resolves reviews after they are requested, some by their own requester", () => {
    const requested = new Map<string, string>();
    let selfApproved = 0;
    let resolved = 0;
    for (const record of history.records) {
      const id = /review (\w{8})/.exec(record.changeLog)?.[1];
      if (record.actionType.endsWith("_review_create")) requested.set(id!, record.updatedBy);
      if (/_review_(accept|reject)$/.test(record.actionType)) {
        expect(requested.has(id!), record.changeLog).toBe(true);
        resolved++;
        if (record.actionType.endsWith("accept") && requested.get(id!) === record.updatedBy) selfApproved++;
      }
    }
    expect(resolved).toBeGreaterThan(10);
    expect(selfApproved).toBeGreaterThan(0);
    // Self-approvals are the exception.
    expect(selfApproved / resolved).toBeLessThan(0.1);
  });

  it("keeps exactly N records for any N, bursts included", () => {
    for (const n of [0, 1, 2, 3, 4, 5, 60, 999]) expect(generate(7, n).records, `${n}`).toHaveLength(n);
  });

  it("follows a team's rhythm: office hours, quiet weekends, no empty day, days unlike each other", () => {
    // Days and hours in UTC: generate() gives the team no zone offset.
    const perDay = new Map<string, number>();
    let office = 0;
    for (const at of history.instants) {
      const day = new Date(at).toISOString().slice(0, 10);
      perDay.set(day, (perDay.get(day) ?? 0) + 1);
      const hour = new Date(at).getUTCHours();
      if (hour >= 8 && hour < 18) office++;
    }
    const first = Math.ceil((NOW - 120 * DAY) / DAY) * DAY;
    const weekday: number[] = [];
    const weekend: number[] = [];
    for (let t = first; t < NOW - DAY; t += DAY) {
      const count = perDay.get(new Date(t).toISOString().slice(0, 10)) ?? 0;
      expect(count, new Date(t).toISOString()).toBeGreaterThan(0);
      // Bursts (bulk jobs) are not the team's rhythm: leave their days out of the averages.
      if (count > 150) continue;
      const day = new Date(t).getUTCDay();
      (day === 0 || day === 6 ? weekend : weekday).push(count);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(weekday)).toBeGreaterThan(4 * mean(weekend));
    expect(office / history.instants.length).toBeGreaterThan(0.75);
    // Not the same count every weekday, as a real team's are not.
    expect(Math.max(...weekday) - Math.min(...weekday)).toBeGreaterThan(mean(weekday) / 3);
  });

  it("reviews most changes before they are made: a few hot-fixes, rejections, withdrawals, self-approvals", () => {
    // The report's rule (docs/reports.md "What the compliance Markdown contains"): a change is reviewed when the event just before
    // it, among its entity's changes and approvals of its kind, is an approval.
    const experimentChanges = new Set([
      "schedule_experiment_start",
      "experiment_start",
      "experiment_pause_assignment",
      "experiment_decision_make",
      "experiment_abandon",
      "experiment_restart",
      "archive_experiment",
    ]);
    const kindOf = (type: string) =>
      experimentChanges.has(type) || type.startsWith("experiment_review")
        ? "experiment"
        : type.startsWith("config_") || type.startsWith("gate_") || type.startsWith("dynamic_config_")
          ? "config"
          : null;
    const lastWasApproval = new Map<string, boolean>();
    let changes = 0;
    let unreviewed = 0;
    const counts = new Map<string, number>();
    for (const r of history.records) {
      counts.set(r.actionType, (counts.get(r.actionType) ?? 0) + 1);
      const kind = kindOf(r.actionType);
      if (kind === null || /_create$|_review_(create|reject|delete)$/.test(r.actionType)) continue;
      const key = `${kind} ${r.name}`;
      if (r.actionType.endsWith("_review_accept")) {
        lastWasApproval.set(key, true);
        continue;
      }
      changes++;
      if (!lastWasApproval.get(key)) unreviewed++;
      lastWasApproval.set(key, false);
    }
    expect(changes).toBeGreaterThan(500);
    expect(unreviewed / changes).toBeGreaterThan(0.01);
    expect(unreviewed / changes).toBeLessThan(0.1);
    for (const type of ["config_review_reject", "config_review_delete", "experiment_review_reject"])
      expect(counts.get(type) ?? 0, type).toBeGreaterThan(0);
  });

  it("has several updaters, bursts of hundreds in one second, and names reports must escape", () => {
    expect(new Set(history.records.map((r) => r.updatedBy)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(history.records.map((r) => r.updatedByUserID)).size).toBe(
      new Set(history.records.map((r) => r.updatedBy)).size,
    );
    const perSecond = new Map<string, number>();
    for (const r of history.records)
      perSecond.set(`${r.date} ${r.time}`, (perSecond.get(`${r.date} ${r.time}`) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeGreaterThanOrEqual(100);
    const names = history.records.map((r) => r.name);
    expect(names.some((n) => n.includes("|"))).toBe(true);
    expect(names.some((n) => n.includes("`"))).toBe(true);
    expect(names.some((n) => n.startsWith("="))).toBe(true);
    // Even a small history has them.
    const small = generate(3, 60).records.map((r) => r.name);
    expect(small.some((n) => n.includes("|")) && small.some((n) => n.startsWith("="))).toBe(true);
  });
});

describe("configRate", () => {
  const creates = (g: Generated) => g.records.filter((r) => r.actionType === "dynamic_config_create").length;

  it("1 is the default mix; 8 creates several times the dynamic configs in as many records", () => {
    const plain = generate(11, 4000);
    expect(generate(11, 4000, 120, 1).records).toEqual(plain.records);
    expect(creates(generate(11, 4000, 120, 8))).toBeGreaterThan(4 * creates(plain));
  });
});

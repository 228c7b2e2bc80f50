// The seeded history generator: N records over D days ending at "now", produced by a small state
// machine over experiments, dynamic configs and gates, so that what the log says happened is
// consistent (an experiment is started before it is paused; a rule edit's `old` is the previous
// `new`). Records follow a team's rhythm (rhythm.ts: office hours, quiet weekends); most changes go
// through a review (reviewFlow.ts), whose answer and the approved change come later, in working time;
// bulk jobs add bursts of records within one second. Every config/experiment change is reported to the
// HistoryObserver for the entity routes.
import type { AuditRule } from "../../api/schemas.ts";
import type { AuditStore, StoredRecord } from "../auditStore.ts";
import { Prng } from "../prng.ts";
import type { ExperimentStatus, HistoryObserver, SimActor } from "../types.ts";
import { consoleApiActor, makeActors } from "./actors.ts";
import { FollowUps } from "./followUps.ts";
import { NamePool } from "./names.ts";
import { type Draft, type Emitted, type Reviewable, ReviewFlow } from "./reviewFlow.ts";
import { Timeline } from "./rhythm.ts";
import { applyRuleEdit, newRule, RULE_EDITS, type RuleEdit } from "./rules.ts";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Local hours the team counts as night (on-call time): before 07:00 and from 20:00. */
const NIGHT_ENDS = 7;
const NIGHT_STARTS = 20;
/** Share of records that arrive in bursts (hundreds of records within one second): bulk jobs. */
const BURST_SHARE = 0.03;
const TAGS = ["★ Core", "checkout", "growth", "infra", "mobile", "compliance"];
const MAX_RULES = 6;
const LAYERS = ["checkout_layer", "search_layer", "onboarding_layer", "pricing_layer", "feed_layer"];
/** A change is made by its entity's owner this often, else by whoever is at work. */
const OWNER_AUTHORS = 0.75;
/** Metrics a bulk job tags: enough distinct names for the largest burst. */
const METRIC_AREAS = [
  "checkout",
  "search",
  "feed",
  "signup",
  "billing",
  "ads",
  "cart",
  "profile",
  "pricing",
  "onboarding",
];
const METRIC_EVENTS = [
  "clicks",
  "views",
  "purchases",
  "sessions",
  "errors",
  "latency",
  "signups",
  "retention",
  "revenue",
  "scrolls",
];
const METRIC_STATS = ["count", "mean", "p50", "p95", "sum", "rate"];

type ConfigKind = "dynamic_config" | "gate";

interface ConfigState extends Reviewable {
  id: string;
  kind: ConfigKind;
  rules: AuditRule[];
  /** Rules before the last rule edit, for config_revert. */
  previous: AuditRule[] | null;
  enabled: boolean;
  owner: SimActor;
}

interface ExperimentState extends Reviewable {
  id: string;
  status: ExperimentStatus;
  scheduled: boolean;
  layerId: string | null;
  owner: SimActor;
  /** Its position in the live pool, for an O(1) removal when archived. */
  index: number;
}

export interface HistoryPlan {
  records: number;
  days: number;
  /** Epoch ms; every generated record is older than this. */
  endAt: number;
  /** The team's offset from UTC at an instant: it keeps office hours there. Default UTC. */
  offsetMinutes?: (at: number) => number;
  /** Weight of creating a dynamic config against the default mix (SimulatorOptions.configRate). Default 1. */
  configRate?: number;
}

interface Burst {
  /** Comes just before this regular record, at its second. */
  before: number;
  size: number;
}

export class HistoryGenerator {
  private readonly prng: Prng;
  /** Ids come from their own stream so that id shapes do not shift the history's choices. */
  private readonly ids: Prng;
  private readonly names: NamePool;
  readonly actors: SimActor[];
  private readonly bot: SimActor;
  private readonly configs: ConfigState[] = [];
  private readonly gateCount = { value: 0 };
  private readonly experiments: ExperimentState[] = [];
  /** Layers whose layer_create record is out: a layer is created before its first experiment joins. */
  private readonly createdLayers = new Set<string>();
  private readonly reviews: ReviewFlow;
  /** Steps owed later, by record slot; `slot` counts the records of the team's rhythm emitted so far. */
  private readonly followUps = new FollowUps<(at: number) => Emitted>();
  private slot = 0;
  /** Record slots per busy hour of the history, to turn a review's delay into slots. */
  private slotsPerBusyHour = 1;
  /** The team's offset from UTC (HistoryPlan.offsetMinutes), once fill() has it. */
  private offsetMinutes: (at: number) => number = () => 0;
  /** HistoryPlan.configRate, once fill() has it. */
  private configRate = 1;

  constructor(
    seed: number,
    private readonly observer: HistoryObserver,
    idSeed: number = seed,
  ) {
    this.prng = new Prng(seed, 1);
    this.ids = new Prng(idSeed, 2);
    this.names = new NamePool(new Prng(seed, 3));
    this.actors = makeActors(seed);
    this.bot = this.actors.find((a) => a.email.startsWith("deploy-bot")) ?? this.actors[0]!;
    this.reviews = new ReviewFlow(
      this.prng,
      this.ids,
      this.actors,
      (busyHours, step) =>
        this.followUps.push(this.slot + Math.max(1, Math.round(busyHours * this.slotsPerBusyHour)), step),
      new Prng(seed, 4),
      consoleApiActor(seed),
      (at) => {
        const hour = Math.floor(((at + this.offsetMinutes(at) * 60_000) % DAY_MS) / HOUR_MS);
        return hour < NIGHT_ENDS || hour >= NIGHT_STARTS;
      },
    );
  }

  /**
   * A fresh 22-character record id. Collisions among 62^22 ids do not happen in practice, and the
   * store refuses a duplicate anyway, so the hot path spends no lookup on them.
   */
  recordId(_store: AuditStore): string {
    return this.ids.alphanumeric(22);
  }

  /** Fills an empty store with the planned history: exactly `plan.records` records. */
  fill(store: AuditStore, plan: HistoryPlan): void {
    const start = plan.endAt - Math.round(plan.days * DAY_MS);
    this.offsetMinutes = plan.offsetMinutes ?? (() => 0);
    this.configRate = plan.configRate ?? 1;
    const timeline = new Timeline(start, plan.endAt, this.offsetMinutes, this.prng);
    const bursts = this.planBursts(plan.records);
    const regular = plan.records - bursts.reduce((sum, b) => sum + b.size, 0);
    this.slotsPerBusyHour = regular / Math.max(1, timeline.busyHours);
    let last = start;
    let next = 0;
    for (let i = 0; i < regular; i++) {
      // Stratified quantiles keep the array sorted as it is built (no sort of 1M records).
      const at = Math.max(last, timeline.at((i + this.prng.next()) / regular));
      for (; bursts[next]?.before === i; next++) last = this.burst(store, at, bursts[next]!.size, plan.endAt);
      last = Math.max(last, at);
      this.emit(store, last, this.prng.pick(this.actors));
    }
  }

  /**
   * Bulk jobs: their records are extra to the rhythm (placed between regular records, not taking
   * their time slots, so no day is left empty after one). At least one per history of 4+ records.
   */
  private planBursts(n: number): Burst[] {
    if (n < 4) return [];
    const maxBurst = Math.max(2, Math.min(500, Math.floor(n / 10)));
    const minBurst = Math.max(2, Math.min(100, Math.floor(n / 40)));
    const count = Math.max(1, Math.round((n * BURST_SHARE) / ((minBurst + maxBurst) / 2)));
    const sizes = Array.from({ length: count }, () => this.prng.int(minBurst, maxBurst));
    const regular = n - sizes.reduce((sum, s) => sum + s, 0);
    if (regular < 1) return [];
    return sizes
      .map((size) => ({ before: this.prng.int(0, regular - 1), size }))
      .sort((a, b) => a.before - b.before);
  }

  /** The bot tags `size` metrics within the second of `at`; returns the last record's instant. */
  private burst(store: AuditStore, at: number, size: number, endAt: number): number {
    const second = Math.floor(at / 1000) * 1000;
    const tag = this.prng.pick(TAGS);
    const first = this.prng.int(0, METRIC_AREAS.length * METRIC_EVENTS.length * METRIC_STATS.length - 1);
    let when = at;
    for (let j = 0; j < size; j++) {
      when = Math.max(at, Math.min(endAt - 1, second + Math.floor((j * 1000) / size)));
      const name = metricName(first + j);
      store.append({
        id: this.recordId(store),
        at: when,
        actor: this.bot,
        name,
        actionType: "metric_add_tag",
        changeLog: `Added tag ${tag} (bulk job)`,
        tags: [tag],
      });
    }
    return when;
  }

  /** Appends `count` more records at `at` (or just after the newest record), continuing the story. */
  extend(store: AuditStore, count: number, at: number): StoredRecord[] {
    const added: StoredRecord[] = [];
    for (let i = 0; i < count; i++) {
      const when = Math.max(at, store.newestAt ?? at);
      added.push(this.emit(store, when, this.prng.pick(this.actors)));
    }
    return added;
  }

  /** One record: a step owed by an earlier one when due (a review's answer, an approved change), else a new one. */
  private emit(store: AuditStore, at: number, actor: SimActor): StoredRecord {
    this.slot++;
    const due = this.followUps.popDue(this.slot);
    const { actor: by, draft } = due ? due(at) : this.step(at, actor);
    return store.append({
      id: this.recordId(store),
      at,
      actor: by,
      name: draft.name,
      actionType: draft.actionType,
      changeLog: draft.changeLog,
      changes: draft.changes,
      tags: draft.tags,
    });
  }

  /** One new action chosen from what the current state allows. */
  private step(at: number, actor: SimActor): Emitted {
    const dynamicConfigs = this.configs.length - this.gateCount.value;
    const live = this.experiments.length;
    const weights = [
      14, // login
      dynamicConfigs < 4 ? 30 : (dynamicConfigs < 5000 ? 0.5 : 0.05) * this.configRate, // create dynamic config
      this.gateCount.value < 3 ? 30 : this.gateCount.value < 5000 ? 0.4 : 0.04, // create gate
      this.configs.length > 0 ? 22 : 0, // rule edit
      this.configs.length > 0 ? 5 : 0, // other config change
      live < 3 ? 25 : live < 3000 ? 1.6 : 0.16, // create experiment
      live > 0 ? 12 : 0, // experiment state change
      live > 0 ? 0.6 : 0, // experiment owner change
    ];
    const choice = this.prng.weighted(weights);
    switch (choice) {
      case 0:
        return this.login(actor);
      case 1:
        return { actor, draft: this.createConfig("dynamic_config", at, actor) };
      case 2:
        return { actor, draft: this.createConfig("gate", at, actor) };
      case 3:
      case 4: {
        const edit = choice === 3;
        const config = this.pickFree(this.configs, true);
        if (config === undefined) return this.login(actor);
        const apply = (t: number, by: SimActor) =>
          edit ? this.editRules(config, t, by) : this.otherConfigChange(config, t, by);
        return this.reviews.start(
          { kind: "config", entity: config, author: this.authorOf(config, actor), apply },
          at,
        );
      }
      case 5:
        return { actor, draft: this.createExperiment(at, actor) };
      case 6: {
        const experiment = this.pickFree(this.experiments, false);
        if (experiment === undefined) return this.login(actor);
        const apply = (t: number, by: SimActor) => this.moveExperiment(experiment, t, by);
        return this.reviews.start(
          { kind: "experiment", entity: experiment, author: this.authorOf(experiment, actor), apply },
          at,
        );
      }
      default:
        return { actor, draft: this.changeExperimentOwner(actor) };
    }
  }

  private login(actor: SimActor): Emitted {
    return {
      actor,
      draft: { name: actor.name, actionType: "user_login", changeLog: `${actor.name} logged in` },
    };
  }

  private authorOf(entity: { owner: SimActor }, actor: SimActor): SimActor {
    return this.prng.chance(OWNER_AUTHORS) ? entity.owner : actor;
  }

  /**
   * An entity no review is open on, or undefined after a few tries. `recent`: favour the newest ones
   * (a team works on what it built lately; old configs are rarely touched).
   */
  private pickFree<T extends Reviewable>(items: readonly T[], recent: boolean): T | undefined {
    for (let tries = 0; tries < 4; tries++) {
      const u = this.prng.next();
      const index = recent
        ? items.length - 1 - Math.floor(items.length * u * u * u)
        : Math.floor(items.length * u);
      const item = items[index];
      if (item !== undefined && !item.busy) return item;
    }
    return undefined;
  }

  private someTags(): string[] {
    if (!this.prng.chance(0.5)) return [];
    const first = this.prng.pick(TAGS);
    const second = this.prng.pick(TAGS);
    return first === second ? [first] : [first, second];
  }

  private reportConfig(config: ConfigState, at: number, actor: SimActor, actionType: string): void {
    this.observer.configChanged({
      configId: config.id,
      name: config.name,
      kind: config.kind,
      rules: config.rules,
      at,
      actor,
      actionType,
    });
  }

  private reportExperiment(
    experiment: ExperimentState,
    at: number,
    actor: SimActor,
    actionType: string,
  ): void {
    this.observer.experimentChanged({
      experimentId: experiment.id,
      name: experiment.name,
      status: experiment.status,
      layerId: experiment.layerId,
      at,
      actor,
      actionType,
    });
  }

  private createConfig(kind: ConfigKind, at: number, actor: SimActor): Draft {
    const rules = [newRule(this.prng, kind)];
    if (this.prng.chance(0.5)) rules.push(newRule(this.prng, kind));
    const config: ConfigState = {
      id: this.ids.alphanumeric(22),
      name: this.names.next(kind),
      kind,
      rules,
      previous: null,
      enabled: true,
      tags: this.someTags(),
      owner: actor,
      busy: false,
    };
    this.configs.push(config);
    if (kind === "gate") this.gateCount.value++;
    const actionType = kind === "gate" ? "gate_create" : "dynamic_config_create";
    this.reportConfig(config, at, actor, actionType);
    return {
      name: config.name,
      actionType,
      changeLog: `Created ${kind === "gate" ? "gate" : "dynamic config"} ${config.name}`,
      changes: { rules: { old: [], new: rules } },
      tags: config.tags,
    };
  }

  private editRules(config: ConfigState, at: number, actor: SimActor): Draft {
    let edit: RuleEdit = this.prng.pick(RULE_EDITS);
    // Keep rule lists short, as real ones are: past the cap an addition becomes a removal.
    if (edit === "ruleAdded" && config.rules.length >= MAX_RULES) edit = "ruleRemoved";
    const result =
      applyRuleEdit(this.prng, config.rules, edit, config.kind) ??
      applyRuleEdit(
        this.prng,
        config.rules,
        config.rules.length >= MAX_RULES ? "ruleRemoved" : "ruleAdded",
        config.kind,
      )!;
    const old = config.rules;
    config.previous = old;
    config.rules = result.rules;
    const actionType =
      config.kind === "gate"
        ? "gate_update"
        : edit === "environment"
          ? "config_environments_update"
          : edit === "resalt"
            ? "config_resalt"
            : "config_conditions_update";
    this.reportConfig(config, at, actor, actionType);
    return {
      name: config.name,
      actionType,
      changeLog: result.changeLog,
      changes: { rules: { old, new: result.rules } },
      tags: config.tags,
    };
  }

  private otherConfigChange(config: ConfigState, at: number, actor: SimActor): Draft {
    const choice = this.prng.int(0, 4);
    let draft: Draft;
    if (choice === 0 && config.kind === "dynamic_config") {
      draft = {
        name: config.name,
        actionType: "config_default_value_update",
        changeLog: "Updated the default value",
      };
    } else if (choice === 1 && config.kind === "dynamic_config") {
      config.enabled = !config.enabled;
      draft = {
        name: config.name,
        actionType: "config_state_toggle",
        changeLog: config.enabled ? "Enabled the config" : "Disabled the config",
      };
    } else if (choice === 2 && config.kind === "dynamic_config" && config.previous !== null) {
      const old = config.rules;
      config.rules = config.previous;
      config.previous = old;
      draft = {
        name: config.name,
        actionType: "config_revert",
        changeLog: "Reverted to the previous version",
        changes: { rules: { old, new: config.rules } },
      };
    } else if (choice !== 4) {
      const tag = this.prng.pick(TAGS);
      if (!config.tags.includes(tag)) config.tags = [...config.tags, tag];
      draft = {
        name: config.name,
        actionType: config.kind === "gate" ? "gate_update" : "config_add_tag",
        changeLog: `Added tag ${tag}`,
      };
    } else {
      const before = config.owner;
      config.owner = this.prng.pick(this.actors);
      draft = {
        name: config.name,
        actionType: config.kind === "gate" ? "gate_update_owners" : "dynamic_config_update_owners",
        changeLog: `Changed owner from ${before.name} to ${config.owner.name}`,
      };
    }
    this.reportConfig(config, at, actor, draft.actionType);
    return { ...draft, tags: config.tags };
  }

  private createExperiment(at: number, actor: SimActor): Draft {
    const layerId = this.prng.chance(0.4) ? this.prng.pick(LAYERS) : null;
    if (layerId !== null && !this.createdLayers.has(layerId)) {
      // This step creates the layer (the audit log names it, so a sync reads its experiments); the
      // experiment comes in a later step.
      this.createdLayers.add(layerId);
      this.observer.layerCreated(layerId);
      return { name: layerId, actionType: "layer_create", changeLog: `Created layer ${layerId}` };
    }
    const experiment: ExperimentState = {
      id: this.ids.alphanumeric(22),
      name: this.names.next("experiment"),
      status: "setup",
      scheduled: false,
      layerId,
      tags: this.someTags(),
      owner: actor,
      busy: false,
      index: this.experiments.length,
    };
    this.experiments.push(experiment);
    this.reportExperiment(experiment, at, actor, "experiment_create");
    return {
      name: experiment.name,
      actionType: "experiment_create",
      changeLog: `Created experiment ${experiment.name}`,
      tags: experiment.tags,
    };
  }

  private moveExperiment(experiment: ExperimentState, at: number, actor: SimActor): Draft {
    const r = this.prng.next();
    let actionType: string;
    let changeLog: string;
    switch (experiment.status) {
      case "setup":
        if (!experiment.scheduled && r < 0.3) {
          experiment.scheduled = true;
          actionType = "schedule_experiment_start";
          changeLog = "Scheduled the experiment to start";
        } else {
          experiment.status = "active";
          actionType = "experiment_start";
          changeLog = "Started the experiment";
        }
        break;
      case "active":
        if (r < 0.6) {
          experiment.status = "assignment_stopped";
          actionType = "experiment_pause_assignment";
          changeLog = "Paused assignment";
        } else if (r < 0.8) {
          experiment.status = "decision_made";
          actionType = "experiment_decision_make";
          changeLog = "Made a decision: ship Test";
        } else {
          experiment.status = "abandoned";
          actionType = "experiment_abandon";
          changeLog = "Abandoned the experiment";
        }
        break;
      case "assignment_stopped":
        if (r < 0.6) {
          experiment.status = "decision_made";
          actionType = "experiment_decision_make";
          changeLog = "Made a decision: ship Control";
        } else if (r < 0.85) {
          experiment.status = "abandoned";
          actionType = "experiment_abandon";
          changeLog = "Abandoned the experiment";
        } else {
          experiment.status = "active";
          actionType = "experiment_restart";
          changeLog = "Restarted the experiment";
        }
        break;
      default:
        if (r < 0.7) {
          experiment.status = "archived";
          actionType = "archive_experiment";
          changeLog = "Archived the experiment";
          // Archived experiments leave the live pool (swap-remove keeps this O(1)).
          this.removeExperiment(experiment);
        } else {
          experiment.status = "active";
          actionType = "experiment_restart";
          changeLog = "Restarted the experiment";
        }
    }
    this.reportExperiment(experiment, at, actor, actionType);
    return { name: experiment.name, actionType, changeLog, tags: experiment.tags };
  }

  private removeExperiment(experiment: ExperimentState): void {
    const last = this.experiments.pop()!;
    if (last !== experiment) {
      last.index = experiment.index;
      this.experiments[experiment.index] = last;
    }
  }

  private changeExperimentOwner(actor: SimActor): Draft {
    const experiment = this.prng.pick(this.experiments);
    const before = experiment.owner;
    experiment.owner = this.prng.pick(this.actors.filter((a) => a.id !== before.id));
    return {
      name: experiment.name,
      actionType: "experiment_update_owners",
      changeLog: `Changed owner from ${before.name} to ${experiment.owner.name} (by ${actor.name})`,
      tags: experiment.tags,
    };
  }
}

function metricName(n: number): string {
  const i = n % (METRIC_AREAS.length * METRIC_EVENTS.length * METRIC_STATS.length);
  const stat = METRIC_STATS[i % METRIC_STATS.length]!;
  const event = METRIC_EVENTS[Math.floor(i / METRIC_STATS.length) % METRIC_EVENTS.length]!;
  const area = METRIC_AREAS[Math.floor(i / (METRIC_STATS.length * METRIC_EVENTS.length))]!;
  return `${area}_${event}_${stat}`;
}

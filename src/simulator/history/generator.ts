// The seeded history generator: N records over D days ending at "now", produced by a small state
// machine over experiments, dynamic configs and gates, so that what the log says happened is
// consistent (an experiment is started before it is paused; a rule edit's `old` is the previous
// `new`). Every config/experiment change is reported to the HistoryObserver for the entity routes.
import type { AuditRule } from "../../api/schemas.ts";
import type { AuditStore, NewRecord, StoredRecord } from "../auditStore.ts";
import { Prng } from "../prng.ts";
import type { ExperimentStatus, HistoryObserver, SimActor } from "../types.ts";
import { makeActors } from "./actors.ts";
import { NamePool } from "./names.ts";
import { applyRuleEdit, newRule, RULE_EDITS, type RuleEdit } from "./rules.ts";

const DAY_MS = 86_400_000;
/** Share of records that arrive in bursts (hundreds of records within one second). */
const BURST_SHARE = 0.08;
const TAGS = ["★ Core", "checkout", "growth", "infra", "mobile", "compliance"];
const MAX_RULES = 6;
const LAYERS = ["checkout_layer", "search_layer", "onboarding_layer", "pricing_layer", "feed_layer"];

type ConfigKind = "dynamic_config" | "gate";

interface ConfigState {
  id: string;
  name: string;
  kind: ConfigKind;
  rules: AuditRule[];
  /** Rules before the last rule edit, for config_revert. */
  previous: AuditRule[] | null;
  enabled: boolean;
  tags: string[];
  owner: SimActor;
}

interface ExperimentState {
  id: string;
  name: string;
  status: ExperimentStatus;
  scheduled: boolean;
  layerId: string | null;
  tags: string[];
  owner: SimActor;
}

interface PendingReview {
  kind: "experiment" | "config";
  name: string;
  tags: string[];
  creator: SimActor;
  reviewId: string;
}

type Draft = Omit<NewRecord, "id" | "at" | "actor">;

export interface HistoryPlan {
  records: number;
  days: number;
  /** Epoch ms; every generated record is older than this. */
  endAt: number;
}

export class HistoryGenerator {
  private readonly prng: Prng;
  /** Ids come from their own stream so that id shapes do not shift the history's choices. */
  private readonly ids: Prng;
  private readonly names: NamePool;
  readonly actors: SimActor[];
  private readonly configs: ConfigState[] = [];
  private readonly gateCount = { value: 0 };
  private readonly experiments: ExperimentState[] = [];
  private readonly reviews: PendingReview[] = [];

  constructor(
    seed: number,
    private readonly observer: HistoryObserver,
  ) {
    this.prng = new Prng(seed, 1);
    this.ids = new Prng(seed, 2);
    this.names = new NamePool(new Prng(seed, 3));
    this.actors = makeActors(seed);
  }

  /**
   * A fresh 22-character record id. Collisions among 62^22 ids do not happen in practice, and the
   * store refuses a duplicate anyway, so the hot path spends no lookup on them.
   */
  recordId(_store: AuditStore): string {
    return this.ids.alphanumeric(22);
  }

  /** Fills an empty store with the planned history. */
  fill(store: AuditStore, plan: HistoryPlan): void {
    const n = plan.records;
    const start = plan.endAt - Math.round(plan.days * DAY_MS);
    const span = plan.endAt - start;
    const maxBurst = Math.max(2, Math.min(500, Math.floor(n / 10)));
    const minBurst = Math.max(2, Math.min(100, Math.floor(n / 40)));
    const burstChance = BURST_SHARE / ((minBurst + maxBurst) / 2);
    let last = start;
    let i = 0;
    let bursts = 0;
    while (i < n) {
      // Stratified instants keep the array sorted as it is built (no sort of 1M records).
      const base = Math.max(last, Math.floor(start + (span * (i + this.prng.next())) / n));
      // At least one burst per history, even when the dice never roll one.
      const burstDue = bursts === 0 && i >= n / 2;
      if (n - i > 1 && (this.prng.chance(burstChance) || burstDue)) {
        bursts++;
        const size = Math.min(n - i, this.prng.int(minBurst, maxBurst));
        const actor = this.prng.pick(this.actors);
        const second = Math.floor(base / 1000) * 1000;
        for (let j = 0; j < size; j++) {
          const at = Math.max(last, Math.min(plan.endAt - 1, second + Math.floor((j * 1000) / size)));
          this.emit(store, at, actor);
          last = at;
        }
        i += size;
      } else {
        this.emit(store, base, this.prng.pick(this.actors));
        last = base;
        i++;
      }
    }
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

  private emit(store: AuditStore, at: number, actor: SimActor): StoredRecord {
    const draft = this.step(at, actor);
    return store.append({
      id: this.recordId(store),
      at,
      actor,
      name: draft.name,
      actionType: draft.actionType,
      changeLog: draft.changeLog,
      changes: draft.changes,
      tags: draft.tags,
    });
  }

  /** One action chosen from what the current state allows. */
  private step(at: number, actor: SimActor): Draft {
    const dynamicConfigs = this.configs.length - this.gateCount.value;
    const live = this.experiments.length;
    const weights = [
      6, // login
      dynamicConfigs < 4 ? 30 : dynamicConfigs < 5000 ? 2 : 0.2, // create dynamic config
      this.gateCount.value < 3 ? 30 : this.gateCount.value < 5000 ? 1.5 : 0.15, // create gate
      this.configs.length > 0 ? 40 : 0, // rule edit
      this.configs.length > 0 ? 10 : 0, // other config change
      live < 3 ? 25 : live < 3000 ? 3 : 0.3, // create experiment
      live > 0 ? 20 : 0, // experiment state change
      this.configs.length + live > 0 ? 5 : 0, // review requested
      this.reviews.length > 0 ? 7 : 0, // review accepted / rejected
      live > 0 ? 2 : 0, // experiment owner change
    ];
    switch (this.prng.weighted(weights)) {
      case 0:
        return { name: actor.name, actionType: "user_login", changeLog: `${actor.name} logged in` };
      case 1:
        return this.createConfig("dynamic_config", at, actor);
      case 2:
        return this.createConfig("gate", at, actor);
      case 3:
        return this.editRules(at, actor);
      case 4:
        return this.otherConfigChange(at, actor);
      case 5:
        return this.createExperiment(at, actor);
      case 6:
        return this.moveExperiment(at, actor);
      case 7:
        return this.requestReview(actor);
      case 8:
        return this.resolveReview();
      default:
        return this.changeExperimentOwner(actor);
    }
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

  private editRules(at: number, actor: SimActor): Draft {
    const config = this.prng.pick(this.configs);
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

  private otherConfigChange(at: number, actor: SimActor): Draft {
    const config = this.prng.pick(this.configs);
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
    } else if (choice === 3) {
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
    const experiment: ExperimentState = {
      id: this.ids.alphanumeric(22),
      name: this.names.next("experiment"),
      status: "setup",
      scheduled: false,
      layerId: this.prng.chance(0.4) ? this.prng.pick(LAYERS) : null,
      tags: this.someTags(),
      owner: actor,
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

  private moveExperiment(at: number, actor: SimActor): Draft {
    const index = this.prng.int(0, this.experiments.length - 1);
    const experiment = this.experiments[index]!;
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
          this.experiments[index] = this.experiments[this.experiments.length - 1]!;
          this.experiments.pop();
        } else {
          experiment.status = "active";
          actionType = "experiment_restart";
          changeLog = "Restarted the experiment";
        }
    }
    this.reportExperiment(experiment, at, actor, actionType);
    return { name: experiment.name, actionType, changeLog, tags: experiment.tags };
  }

  private requestReview(actor: SimActor): Draft {
    const onExperiment = this.experiments.length > 0 && (this.configs.length === 0 || this.prng.chance(0.5));
    const entity = onExperiment ? this.prng.pick(this.experiments) : this.prng.pick(this.configs);
    const review: PendingReview = {
      kind: onExperiment ? "experiment" : "config",
      name: entity.name,
      tags: entity.tags,
      creator: actor,
      reviewId: this.ids.alphanumeric(8),
    };
    this.reviews.push(review);
    return {
      name: review.name,
      actionType: onExperiment ? "experiment_review_create" : "config_review_create",
      changeLog: `Requested review ${review.reviewId}`,
      tags: review.tags,
    };
  }

  private resolveReview(): Draft {
    const index = this.prng.int(0, this.reviews.length - 1);
    const review = this.reviews[index]!;
    this.reviews[index] = this.reviews[this.reviews.length - 1]!;
    this.reviews.pop();
    const accepted = this.prng.chance(0.7);
    // When `actor` is the review's creator this is a self-approval: the log says so only through
    // updatedBy, as the real one does.
    return {
      name: review.name,
      actionType: `${review.kind}_review_${accepted ? "accept" : "reject"}`,
      changeLog: `${accepted ? "Accepted" : "Rejected"} review ${review.reviewId} requested by ${review.creator.name}`,
      tags: review.tags,
    };
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

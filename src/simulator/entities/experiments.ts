// Experiments of the simulated project: created over the API or reported by the history generator,
// listed per layer, groups enabled by name. The generator reports many changes, so state is kept
// compact (a few fields per experiment) and the full Experiment record is built only when served.
import { z } from "zod";
import { hash32 } from "../prng.ts";
import type {
  AuditAppender,
  ExperimentStatus,
  HistoryObserver,
  SimActor,
  SimRequest,
  SimRoute,
} from "../types.ts";
import type { ExperimentCreateInput, GroupInput } from "./experimentInput.ts";
import { experimentCreateBodySchema } from "./experimentInput.ts";
import { seededId } from "./ids.ts";
import { listResponse, parsePageQuery } from "./pagination.ts";
import type { FieldError } from "./responses.ts";
import { badRequest, fieldErrors, notFound } from "./responses.ts";

const EXPERIMENT_CREATED_MESSAGE = "Experiment created successfully.";
const GROUPS_ENABLED_MESSAGE = "Experiment groups enabled successfully.";
const LAYER_EXPERIMENTS_MESSAGE = "Experiments listed successfully.";

export interface Group {
  name: string;
  id: string;
  size: number;
  parameterValues: Record<string, unknown>;
  disabled: boolean;
  description: string;
  foreignGroupID?: string;
}

interface ExperimentState {
  id: string;
  name: string;
  status: ExperimentStatus;
  layerId: string | null;
  createdTime: number;
  creator: SimActor;
  lastModifiedTime: number;
  lastModifier: SimActor;
  version: number;
  startTime: number | null;
  endTime: number | null;
  decisionTime: number | null;
  /** Set by a decision: the shipped group and why (the audit record's changeLog is not reported). */
  decisionReason: string | null;
  launchedGroupID: string | null;
  /** null until someone needs to change them: the default groups are derived from the seed. */
  groups: Group[] | null;
  /** The create request's fields, for experiments created over the API. */
  input: ExperimentCreateInput | null;
}

const ENDED: ReadonlySet<ExperimentStatus> = new Set(["decision_made", "abandoned", "experiment_stopped"]);

const enableGroupsBodySchema = z.object(
  {
    group_names: z
      .array(z.string({ error: "each group name must be a string" }), {
        error: (issue) =>
          issue.input === undefined ? "group_names is required" : "group_names must be an array of strings",
      })
      .min(1, { error: "group_names must name at least one group" }),
  },
  { error: "body must be a JSON object" },
);

export interface ExperimentStoreOptions {
  appender: AuditAppender;
  now: () => number;
  seed: number;
  /** Identity of requests made with the console key (the real service says "CONSOLE API"). */
  consoleActor: SimActor;
}

export class ExperimentStore {
  private readonly experiments = new Map<string, ExperimentState>();
  /** Layer id → experiment ids in the order they joined; a layer exists once it has been named. */
  private readonly layers = new Map<string, Set<string>>();

  constructor(private readonly options: ExperimentStoreOptions) {}

  /** A created layer lists its experiments (none yet) rather than answering 404. */
  readonly observeLayer: HistoryObserver["layerCreated"] = (layerId) => {
    if (!this.layers.has(layerId)) this.layers.set(layerId, new Set());
  };

  readonly observe: HistoryObserver["experimentChanged"] = (event) => {
    let state = this.experiments.get(event.experimentId);
    if (state === undefined) {
      state = this.newState(event.experimentId, event.name, event.at, event.actor, null);
      state.version = 0; // the report below is the first version
      this.experiments.set(state.id, state);
    }
    const previous = state.status;
    state.name = event.name;
    state.status = event.status;
    state.lastModifiedTime = event.at;
    state.lastModifier = event.actor;
    state.version += 1;
    if (event.status === "active" && previous !== "active") {
      // A (re)start opens a new run.
      state.startTime = event.at;
      state.endTime = null;
    }
    if (ENDED.has(event.status) && state.endTime === null) state.endTime = event.at;
    if (event.status === "decision_made") this.decide(state, event.at);
    this.moveToLayer(state, event.layerId);
  };

  /** Ships one of the groups (picked from the id and time: reproducible). */
  private decide(state: ExperimentState, at: number): void {
    const groups = state.groups ?? this.defaultGroups(state.id);
    const shipped = groups[hash32(`${state.id}@${at}`, 23) % groups.length];
    state.decisionTime = at;
    state.launchedGroupID = shipped?.id ?? null;
    state.decisionReason =
      shipped === undefined ? null : `Shipped ${shipped.name}: it won on the primary metric`;
  }

  /**
   * Sets an experiment's status with no audit record (control: a state the audit timeline contradicts).
   * Addressed by id or name; false when unknown.
   */
  forceStatus(idOrName: string, status: ExperimentStatus, at: number): boolean {
    const state =
      this.experiments.get(idOrName) ?? [...this.experiments.values()].find((e) => e.name === idOrName);
    if (state === undefined) return false;
    state.status = status;
    state.lastModifiedTime = at;
    state.version += 1;
    if (status === "active" && state.startTime === null) state.startTime = at;
    if (status === "decision_made") this.decide(state, at);
    return true;
  }

  /** Ids of the layers named so far (created, or joined by an experiment), in the order first named. */
  layerIds(): string[] {
    return [...this.layers.keys()];
  }

  /** Ids of the layers that list at least one experiment now, in the order first named. */
  populatedLayerIds(): string[] {
    return [...this.layers].flatMap(([id, members]) => (members.size > 0 ? [id] : []));
  }

  /** The full Experiment record of `id`, as the API serves it. */
  get(id: string): Record<string, unknown> | undefined {
    const state = this.experiments.get(id);
    return state === undefined ? undefined : this.toRecord(state);
  }

  routes(): SimRoute[] {
    return [
      {
        method: "POST",
        pattern: /^\/console\/v1\/experiments\/?$/,
        auth: "console",
        handle: (request) => this.create(request.body),
      },
      {
        method: "POST",
        pattern: /^\/console\/v1\/experiments\/([^/]+)\/enable_groups\/?$/,
        auth: "console",
        handle: (request, [id]) => this.enableGroups(id ?? "", request.body),
      },
      {
        method: "GET",
        pattern: /^\/console\/v1\/layers\/([^/]+)\/experiments\/?$/,
        auth: "console",
        handle: (request, [id]) => this.listLayer(request, id ?? ""),
      },
    ];
  }

  private create(body: unknown) {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return badRequest([{ property: "body", message: "body must be a JSON object" }]);
    }
    const parsed = experimentCreateBodySchema.safeParse(body);
    const errors: FieldError[] = parsed.success ? [] : fieldErrors(parsed.error);
    // The id is checked for duplicates even when other fields are bad, so one 400 names everything.
    const rawId = (body as { id?: unknown }).id;
    const rawName = (body as { name?: unknown }).name;
    const id = typeof rawId === "string" ? rawId : typeof rawName === "string" ? idFromName(rawName) : "";
    if (this.experiments.has(id)) {
      errors.push({ property: "id", message: `an experiment with id "${id}" already exists` });
    } else if (rawId === undefined && parsed.success && id.length < 3) {
      errors.push({ property: "id", message: "id is omitted and the name gives no id of 3 characters" });
    }
    if (!parsed.success || errors.length > 0) return badRequest(errors);

    const input = parsed.data;
    const at = this.options.now();
    const actor = this.options.consoleActor;
    const state = this.newState(id, input.name, at, actor, input);
    state.groups = (input.groups ?? DEFAULT_GROUPS).map((group, index) => this.toGroup(id, group, index));
    this.experiments.set(id, state);
    this.moveToLayer(state, input.layerID ?? null);
    this.options.appender.append({
      at,
      // Named like the generator's records: by display name (the entity's name in the audit log).
      name: input.name,
      actionType: "experiment_create",
      changeLog: `Created experiment ${input.name}`,
      actor,
      changes: {},
      tags: input.tags ?? [],
    });
    return { status: 201, body: { message: EXPERIMENT_CREATED_MESSAGE, data: this.toRecord(state) } };
  }

  private enableGroups(id: string, body: unknown) {
    const state = this.experiments.get(id);
    if (state === undefined) return notFound();
    const parsed = enableGroupsBodySchema.safeParse(body);
    if (!parsed.success) return badRequest(fieldErrors(parsed.error));

    const groups = state.groups ?? this.defaultGroups(id);
    const known = new Set(groups.map((group) => group.name));
    const unknown = parsed.data.group_names.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      return badRequest([
        { property: "group_names", message: `unknown group names: ${[...new Set(unknown)].join(", ")}` },
      ]);
    }
    const wanted = new Set(parsed.data.group_names);
    state.groups = groups.map((group) => (wanted.has(group.name) ? { ...group, disabled: false } : group));
    const at = this.options.now();
    const actor = this.options.consoleActor;
    state.lastModifiedTime = at;
    state.lastModifier = actor;
    state.version += 1;
    this.options.appender.append({
      at,
      name: state.name,
      actionType: "experiment_edit",
      changeLog: `Enabled groups: ${[...wanted].join(", ")}`,
      actor,
      changes: {},
    });
    return { status: 201, body: { message: GROUPS_ENABLED_MESSAGE, data: this.toRecord(state) } };
  }

  private listLayer(request: SimRequest, layerId: string) {
    const members = this.layers.get(layerId);
    if (members === undefined) return notFound();
    const page = parsePageQuery(request.query);
    if (Array.isArray(page)) return badRequest(page);
    const ids = [...members].slice(page.offset, page.offset + page.limit);
    const items = ids.map((id) => this.toRecord(this.experiments.get(id)!));
    return listResponse(request, page, members.size, LAYER_EXPERIMENTS_MESSAGE, items);
  }

  private newState(
    id: string,
    name: string,
    at: number,
    actor: SimActor,
    input: ExperimentCreateInput | null,
  ): ExperimentState {
    return {
      id,
      name,
      status: "setup",
      layerId: null,
      createdTime: at,
      creator: actor,
      lastModifiedTime: at,
      lastModifier: actor,
      version: 1,
      startTime: null,
      endTime: null,
      decisionTime: null,
      decisionReason: null,
      launchedGroupID: null,
      groups: null,
      input,
    };
  }

  private moveToLayer(state: ExperimentState, layerId: string | null): void {
    if (state.layerId === layerId) return;
    if (state.layerId !== null) this.layers.get(state.layerId)?.delete(state.id);
    state.layerId = layerId;
    if (layerId === null) return;
    let members = this.layers.get(layerId);
    if (members === undefined) {
      members = new Set();
      this.layers.set(layerId, members);
    }
    members.add(state.id);
  }

  private toGroup(experimentId: string, group: GroupInput, index: number): Group {
    return {
      name: group.name,
      id: group.id || seededId(this.options.seed, "group", experimentId, String(index)),
      size: group.size,
      parameterValues: group.parameterValues,
      disabled: group.disabled ?? false,
      description: group.description ?? "",
      ...(group.foreignGroupID === undefined ? {} : { foreignGroupID: group.foreignGroupID }),
    };
  }

  private defaultGroups(experimentId: string): Group[] {
    return DEFAULT_GROUPS.map((group, index) => this.toGroup(experimentId, group, index));
  }

  private toRecord(state: ExperimentState): Record<string, unknown> {
    // Fields the state owns (a new experiment is always `setup`, whatever the request said).
    const {
      name: _name,
      id: _id,
      status: _status,
      layerID: _layer,
      groups: _groups,
      ...input
    } = requestFields(state);
    const groups = state.groups ?? this.defaultGroups(state.id);
    const viaApi = state.input !== null;
    return {
      ...recordDefaults(),
      ...input,
      id: state.id,
      name: state.name,
      status: state.status,
      groups,
      controlGroupID: input.controlGroupID ?? groups[0]?.id ?? null,
      startTime: state.startTime,
      endTime: state.endTime,
      decisionTime: state.decisionTime,
      decisionReason: state.decisionReason ?? input.decisionReason ?? null,
      launchedGroupID: state.launchedGroupID ?? input.launchedGroupID ?? null,
      layerID: state.layerId,
      version: state.version,
      creatorID: input.creatorID ?? state.creator.id,
      creatorName: state.creator.name,
      creatorEmail: input.creatorEmail ?? (state.creator.email || null),
      createdTime: state.createdTime,
      lastModifierID: state.lastModifier.id,
      lastModifierName: state.lastModifier.name,
      lastModifierEmail: state.lastModifier.email || null,
      lastModifiedTime: state.lastModifiedTime,
      // The OpenAPI document: an entity created by the console API has no owner.
      ...(viaApi
        ? {}
        : {
            owner: {
              ownerID: state.creator.id,
              ownerType: "USER",
              ownerName: state.creator.name,
              ownerEmail: state.creator.email,
            },
          }),
    };
  }
}

function requestFields(state: ExperimentState): Partial<ExperimentCreateInput> {
  return state.input ?? {};
}

/** The real service's rule for an id left out: the name, lower-cased, spaces as underscores. */
function idFromName(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, "_");
}

const DEFAULT_GROUPS: GroupInput[] = [
  { name: "Control", size: 50, parameterValues: {} },
  { name: "Test", size: 50, parameterValues: {} },
];

/**
 * Values of fields the create request left out, from the spec's create sample where it shows them.
 * Fresh objects per record: whoever receives a record may mutate it.
 */
function recordDefaults() {
  return {
    description: "",
    idType: "userID",
    secondaryIDType: null,
    identityResolutionSource: null,
    hypothesis: "",
    links: [],
    launchedGroupID: null,
    allocation: 100,
    primaryMetrics: [],
    secondaryMetrics: [],
    otherMetrics: [],
    primaryMetricTags: [],
    secondaryMetricTags: [],
    targetApps: [],
    holdoutIDs: [],
    tags: [],
    duration: 14,
    targetingGateID: "",
    sequentialTesting: false,
    bonferroniCorrection: false,
    bonferroniCorrectionPerMetric: false,
    benjaminiHochbergPerVariant: false,
    benjaminiHochbergPerMetric: false,
    benjaminiPrimaryMetricsOnly: false,
    defaultConfidenceInterval: "95",
    manualQualityScores: [],
    decisionReason: null,
    experimentType: "BASE",
    subtype: "conversion",
    healthCheckStatus: "PASSED",
    healthChecks: [],
    reviewSettings: { requiredReview: false, allowedReviewers: [] },
    team: null,
    teamID: null,
    analyticsType: "frequentist",
    isSidecar: false,
    enabledNonProdEnvironments: [],
    inlineTargetingRulesJSON: "{}",
    inlineTargetingRules: [],
    summarySections: [],
  };
}

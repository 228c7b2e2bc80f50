// Stored versions of dynamic configs, fed by the history generator (one version per reported config
// change, with the rules after it), so that `GET /dynamic_configs/{id}/versions` agrees with the audit log.
// A version is kept as the generator reported it (its rules array by reference, no copy: an O(1)
// report for 1M records); the full DynamicConfig record is built only when a page is served.
import { z } from "zod";
import type { AuditRule } from "../../api/schemas.ts";
import { hash32 } from "../prng.ts";
import type { HistoryObserver, SimActor, SimRequest, SimRoute } from "../types.ts";
import { listResponse, parsePageQuery } from "./pagination.ts";
import { badRequest, notFound } from "./responses.ts";

const CONFIG_VERSIONS_MESSAGE = "Dynamic config versions listed successfully.";

interface StoredVersion {
  at: number;
  actor: SimActor;
  name: string;
  rules: AuditRule[];
  /** Flipped by each `config_state_toggle` report; a new config is enabled. */
  enabled: boolean;
  /** Changed by `config_default_value_update` (a new config starts with {}). */
  defaultValue: Record<string, unknown>;
  /** Changed by `config_description_update`. */
  description: string;
  /** Grown by `config_add_tag`, shrunk by `config_remove_tag`. */
  tags: string[];
  /** Fields served over the derived ones: a version mutated under its number (control). */
  overrides?: Record<string, unknown>;
}

/** Tags a `config_add_tag` report may add (the report does not say which: picked from the id). */
const CONFIG_TAGS = ["checkout", "growth", "infra", "mobile", "compliance", "★ Core"];
const DEFAULT_VALUE_KEYS = ["limit", "color", "copy", "enabled_regions"] as const;

type ConfigChange = Parameters<HistoryObserver["configChanged"]>[0];

/** The spec's Rule, as console records (not audit records) carry it. */
export interface ConsoleRule {
  name: string;
  id: string;
  baseID: string;
  passPercentage: number;
  conditions: ConsoleCondition[];
  environments: string[] | null;
  returnValue: Record<string, unknown>;
  returnValueJson5: string;
  completedAutomatedRollouts: Rollout[];
  pendingAutomatedRollouts: Rollout[];
}

interface ConsoleCondition {
  type: string;
  operator: string;
  targetValue: string[];
  field: string | null;
  customID: string | null;
}

interface Rollout {
  time: number;
  passPercent: number;
}

const rolloutSchema = z.looseObject({ time: z.number(), passPercent: z.number() });

/**
 * Audit rule → console Rule. Audit condition types and operators are undocumented integers (see
 * ../shared/api/README.md); they are kept as their decimal text rather than guessed names.
 * `at` splits the rule's rollouts into completed (at or before the version) and pending.
 */
export function toConsoleRule(rule: AuditRule, index: number, at: number): ConsoleRule {
  const rollouts = (rule.rollouts ?? []).flatMap((item) => {
    const parsed = rolloutSchema.safeParse(item);
    return parsed.success ? [{ time: parsed.data.time, passPercent: parsed.data.passPercent }] : [];
  });
  const returnValueJson5 = rule.returnValueJSON ?? "{}";
  return {
    name: rule.groupName ?? `Rule ${index + 1}`,
    id: rule.id,
    baseID: rule.id,
    // An audit rule without a percentage passes everyone it targets: the console's default.
    passPercentage: rule.percentagePass ?? 100,
    conditions: (rule.conditionJSON ?? []).map((condition) => ({
      type: String(condition.conditionType ?? ""),
      operator: String(condition.operator ?? ""),
      targetValue: (condition.value ?? []).map((v) => (typeof v === "string" ? v : JSON.stringify(v))),
      field: stringOrNull(condition.extraConfig?.field),
      customID: stringOrNull(condition.extraConfig?.customID),
    })),
    environments: rule.enabledEnvironments ?? (rule.environment ? [rule.environment] : null),
    returnValue: parseObject(returnValueJson5),
    returnValueJson5,
    completedAutomatedRollouts: rollouts.filter((r) => r.time <= at),
    pendingAutomatedRollouts: rollouts.filter((r) => r.time > at),
  };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** The parsed JSON object, or {} when the text is not a JSON object (the text stays in Json5). */
function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * The content after a report: the audit record says only *that* a default value, tag or description
 * changed, so the new value is derived from the config id and version number (seeded, reproducible).
 */
function nextContent(
  previous: StoredVersion | undefined,
  change: ConfigChange,
  number: number,
): Pick<StoredVersion, "enabled" | "defaultValue" | "description" | "tags"> {
  const enabled = previous?.enabled ?? true;
  const content = {
    enabled: change.actionType === "config_state_toggle" ? !enabled : enabled,
    defaultValue: previous?.defaultValue ?? {},
    description: previous?.description ?? "",
    tags: previous?.tags ?? [],
  };
  const h = hash32(`${change.configId}#${number}`, 17);
  switch (change.actionType) {
    case "config_default_value_update":
      return { ...content, defaultValue: derivedDefaultValue(content.defaultValue, h) };
    case "config_description_update":
      return { ...content, description: `${change.name}: revision ${number} (${h % 1000})` };
    case "config_add_tag": {
      const tag = CONFIG_TAGS[h % CONFIG_TAGS.length]!;
      return { ...content, tags: content.tags.includes(tag) ? content.tags : [...content.tags, tag] };
    }
    case "config_remove_tag":
      return { ...content, tags: content.tags.slice(1) };
    default:
      return content;
  }
}

/** One key of the default value set, changed or removed: JSON-path diffs have all three cases. */
function derivedDefaultValue(previous: Record<string, unknown>, h: number): Record<string, unknown> {
  const key = DEFAULT_VALUE_KEYS[h % DEFAULT_VALUE_KEYS.length]!;
  const next = { ...previous };
  if (key in next && h % 5 === 0) {
    delete next[key];
    return next;
  }
  if (key === "limit") next.limit = (h % 50) + 1;
  else if (key === "color") next.color = ["red", "green", "blue"][h % 3];
  else if (key === "copy") next.copy = { title: `Title ${h % 97}`, cta: h % 2 === 0 ? "Buy" : "Try" };
  else next.enabled_regions = ["eu", "us", "apac"].slice(0, (h % 3) + 1);
  return next;
}

export class DynamicConfigStore {
  private readonly configs = new Map<string, StoredVersion[]>();
  /** Config name → id: the audit log names a config by name, and the console addresses it by it. */
  private readonly byName = new Map<string, string>();

  /**
   * Every reported change of a dynamic config is a version (the real service bumps `version` on any
   * edit), carrying the rules as they are after it. Gates have no versions endpoint: not kept.
   */
  readonly observe: HistoryObserver["configChanged"] = (change: ConfigChange) => {
    if (change.kind !== "dynamic_config") return;
    const versions = this.configs.get(change.configId);
    const previous = versions?.[versions.length - 1];
    const version: StoredVersion = {
      at: change.at,
      actor: change.actor,
      name: change.name,
      rules: change.rules,
      ...nextContent(previous, change, (versions?.length ?? 0) + 1),
    };
    if (versions === undefined) this.configs.set(change.configId, [version]);
    else versions.push(version);
    this.byName.set(change.name, change.configId);
  };

  /** The id of a config addressed by id or by name; undefined when unknown (or deleted). */
  resolve(idOrName: string): string | undefined {
    if (this.configs.has(idOrName)) return idOrName;
    const id = this.byName.get(idOrName);
    return id !== undefined && this.configs.has(id) ? id : undefined;
  }

  /**
   * A new version with no audit record (a change the audit log does not show): the newest version's
   * content with `patch` over it, stamped `at` by `actor`. False when the config is unknown.
   */
  plantVersion(idOrName: string, at: number, actor: SimActor, patch: VersionPatch): boolean {
    const id = this.resolve(idOrName);
    const versions = id === undefined ? undefined : this.configs.get(id);
    const last = versions?.[versions.length - 1];
    if (versions === undefined || last === undefined) return false;
    const { overrides: _served, ...content } = last;
    versions.push({ ...content, at, actor, ...patch });
    return true;
  }

  /** Changes what a stored version serves without changing its number (a mutated version). */
  mutateVersion(idOrName: string, number: number, fields: Record<string, unknown>): boolean {
    const id = this.resolve(idOrName);
    const version = id === undefined ? undefined : this.configs.get(id)?.[number - 1];
    if (version === undefined) return false;
    version.overrides = { ...version.overrides, ...fields };
    return true;
  }

  /** The config is deleted: its versions answer 404 from now on. */
  deleteConfig(idOrName: string): boolean {
    const id = this.resolve(idOrName);
    return id !== undefined && this.configs.delete(id);
  }

  /** Ids of the dynamic configs that have versions, in the order they were first reported. */
  ids(): string[] {
    return [...this.configs.keys()];
  }

  /** Names of the dynamic configs that have versions (newest name of each), in the order first reported. */
  names(): string[] {
    return [...this.configs.values()].map((versions) => versions[versions.length - 1]!.name);
  }

  /** How many versions of `configId` are stored (0 for an unknown config). */
  versionCount(configId: string): number {
    return this.configs.get(configId)?.length ?? 0;
  }

  routes(): SimRoute[] {
    return [
      {
        method: "GET",
        pattern: /^\/console\/v1\/dynamic_configs\/([^/]+)\/versions\/?$/,
        auth: "console",
        handle: (request, [id]) => this.listVersions(request, id ?? ""),
      },
    ];
  }

  /** Newest version first, like the audit log's default order. */
  private listVersions(request: SimRequest, idOrName: string) {
    const configId = this.resolve(idOrName);
    const versions = configId === undefined ? undefined : this.configs.get(configId);
    if (configId === undefined || versions === undefined) return notFound();
    const page = parsePageQuery(request.query);
    if (Array.isArray(page)) return badRequest(page);
    const items: unknown[] = [];
    const first = versions[0]!;
    for (let i = page.offset; i < Math.min(versions.length, page.offset + page.limit); i++) {
      const number = versions.length - i;
      items.push(toConfigRecord(configId, first, versions[number - 1]!, number));
    }
    return listResponse(request, page, versions.length, CONFIG_VERSIONS_MESSAGE, items);
  }
}

/** One DynamicConfig record ("Dynamic config version record" in the spec) for a stored version. */
function toConfigRecord(
  configId: string,
  first: StoredVersion,
  version: StoredVersion,
  number: number,
): Record<string, unknown> {
  return {
    id: configId,
    name: version.name,
    description: version.description,
    idType: "userID",
    creatorID: first.actor.id,
    creatorName: first.actor.name,
    creatorEmail: first.actor.email,
    createdTime: first.at,
    lastModifierID: version.actor.id,
    lastModifierName: version.actor.name,
    lastModifierEmail: version.actor.email,
    lastModifiedTime: version.at,
    isEnabled: version.enabled,
    isTemplate: false,
    rules: version.rules.map((rule, index) => toConsoleRule(rule, index, version.at)),
    tags: version.tags,
    targetApps: "",
    holdoutIDs: [],
    team: "",
    teamID: "",
    version: number,
    defaultValue: version.defaultValue,
    defaultValueJson5: JSON.stringify(version.defaultValue),
    owner: {
      ownerID: first.actor.id,
      ownerType: "USER",
      ownerName: first.actor.name,
      ownerEmail: first.actor.email,
    },
    schema: "",
    schemaJson5: "",
    releasePipelineID: "",
    status: version.enabled ? "Enabled" : "Disabled",
    checksPerHour: 0,
    ...version.overrides,
  };
}

/** What a planted version may change; the rest is the newest version's content. */
export interface VersionPatch {
  enabled?: boolean;
  defaultValue?: Record<string, unknown>;
  description?: string;
  tags?: string[];
  /** Any other served fields (targetApps, schema, team…). */
  overrides?: Record<string, unknown>;
}

// Stored versions of dynamic configs, fed by the history generator (one version per reported config
// change, with the rules after it), so that `GET /dynamic_configs/{id}/versions` agrees with the audit log.
// A version is kept as the generator reported it (its rules array by reference, no copy: an O(1)
// report for 1M records); the full DynamicConfig record is built only when a page is served.
import { z } from "zod";
import type { AuditRule } from "../../api/schemas.ts";
import type { HistoryObserver, SimActor, SimRequest, SimRoute } from "../types.ts";
import { listResponse, parsePageQuery } from "./pagination.ts";
import { badRequest, notFound } from "./responses.ts";

export const CONFIG_VERSIONS_MESSAGE = "Dynamic config versions listed successfully.";

interface StoredVersion {
  at: number;
  actor: SimActor;
  name: string;
  rules: AuditRule[];
  /** Flipped by each `config_state_toggle` report; a new config is enabled. */
  enabled: boolean;
}

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

export interface ConsoleCondition {
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

export class DynamicConfigStore {
  private readonly configs = new Map<string, StoredVersion[]>();

  /**
   * Every reported change of a dynamic config is a version (the real service bumps `version` on any
   * edit), carrying the rules as they are after it. Gates have no versions endpoint: not kept.
   */
  readonly observe: HistoryObserver["configChanged"] = (change: ConfigChange) => {
    if (change.kind !== "dynamic_config") return;
    const versions = this.configs.get(change.configId);
    const wasEnabled = versions?.[versions.length - 1]?.enabled ?? true;
    const version: StoredVersion = {
      at: change.at,
      actor: change.actor,
      name: change.name,
      rules: change.rules,
      enabled: change.actionType === "config_state_toggle" ? !wasEnabled : wasEnabled,
    };
    if (versions === undefined) this.configs.set(change.configId, [version]);
    else versions.push(version);
  };

  /** Ids of the dynamic configs that have versions, in the order they were first reported. */
  ids(): string[] {
    return [...this.configs.keys()];
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
  private listVersions(request: SimRequest, configId: string) {
    const versions = this.configs.get(configId);
    if (versions === undefined) return notFound();
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
    description: "",
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
    tags: [],
    targetApps: "",
    holdoutIDs: [],
    team: "",
    teamID: "",
    version: number,
    defaultValue: {},
    defaultValueJson5: "{}",
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
  };
}

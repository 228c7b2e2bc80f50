// The body of `POST /console/v1/experiments`, validated per the spec's Limits and the OpenAPI
// ExperimentCreateDto. Every message names its field's rule, so a 400 says what to fix.
import { z } from "zod";

const EXPERIMENT_STATUSES = [
  "setup",
  "active",
  "decision_made",
  "abandoned",
  "archived",
  "experiment_stopped",
  "assignment_stopped",
] as const;

const requiredString = (field: string) =>
  z.string({
    error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`),
  });

const str = (field: string) => z.string({ error: `${field} must be a string` });
const bool = (field: string) => z.boolean({ error: `${field} must be a boolean` });
const strings = (field: string) => z.array(str(`each of ${field}`), { error: `${field} must be an array` });

const lengthBetween = (field: string, schema: z.ZodString) =>
  schema
    .min(3, { error: `${field} must be 3 to 100 characters long` })
    .max(100, { error: `${field} must be 3 to 100 characters long` });

/** Durations and targetExposures: integers "greater than 1" (OpenAPI: minimum 1, exclusive). */
const intAbove1 = (field: string) =>
  z
    .number({ error: `${field} must be an integer greater than 1` })
    .int({ error: `${field} must be an integer greater than 1` })
    .gt(1, { error: `${field} must be an integer greater than 1` });

const percent = (field: string) =>
  z
    .number({ error: `${field} must be a number from 0 to 100` })
    .min(0, { error: `${field} must be a number from 0 to 100` })
    .max(100, { error: `${field} must be a number from 0 to 100` });

const oneOf = <const T extends readonly [string, ...string[]]>(field: string, values: T) =>
  z.enum(values, { error: `${field} must be one of ${values.join(", ")}` });

const metricRefs = (field: string) =>
  z.array(
    z.object({
      name: str("metric name"),
      type: str("metric type"),
      direction: oneOf("direction", ["increase", "decrease"]).optional(),
      hypothesizedValue: z.number({ error: "hypothesizedValue must be a number" }).optional(),
    }),
    { error: `${field} must be an array` },
  );

const groupInputSchema = z.object({
  name: requiredString("group name").min(1, { error: "group name must not be empty" }),
  id: str("group id").nullish(),
  size: percent("group size"),
  parameterValues: z.record(z.string(), z.unknown(), { error: "parameterValues must be an object" }),
  disabled: bool("disabled").optional(),
  description: str("description").optional(),
  foreignGroupID: str("foreignGroupID").optional(),
});
export type GroupInput = z.infer<typeof groupInputSchema>;

const qualityScoreSchema = z.object({
  criteriaName: str("criteriaName"),
  status: oneOf("status", ["PASSED", "FAILED", "WARNING"]),
  criteriaDescription: str("criteriaDescription"),
  score: z.number({ error: "score must be a number" }),
  weight: z.number({ error: "weight must be a number" }),
});

const filterConditions = [
  "in",
  "not_in",
  "=",
  ">",
  "<",
  ">=",
  "<=",
  "is_null",
  "non_null",
  "contains",
  "not_contains",
  "sql_filter",
  "starts_with",
  "ends_with",
  "after_exposure",
  "before_exposure",
  "is_true",
  "is_false",
] as const;

const nameAndSource = z.array(z.record(z.string(), z.unknown()), { error: "must be an array of objects" });

const experimentCreateSchema = z.object({
  name: lengthBetween("name", requiredString("name")).regex(/^[a-zA-Z0-9_\- ]*$/, {
    error: "name may contain only letters, digits, spaces, _ and -",
  }),
  id: lengthBetween("id", str("id")).regex(/^[a-zA-Z0-9_-]*$/, {
    error: "id may contain only letters, digits, _ and -",
  }),
  description: str("description").max(1000, { error: "description must be at most 1000 characters long" }),
  idType: str("idType"),
  secondaryIDType: str("secondaryIDType").nullable(),
  identifierMappingMode: oneOf("identifierMappingMode", [
    "strictOneToOne",
    "firstTouchOneToMany",
    "lastTouchOneToMany",
  ]),
  identityResolutionSource: str("identityResolutionSource").nullable(),
  hypothesis: str("hypothesis"),
  links: z.array(
    z.object({ url: z.url({ error: "link url must be a URL" }), title: str("link title").optional() }),
    { error: "links must be an array" },
  ),
  groups: z
    .array(groupInputSchema, { error: "groups must be an array" })
    .refine((groups) => new Set(groups.map((g) => g.name)).size === groups.length, {
      // enable_groups addresses groups by name, so names must be unique.
      error: "group names must be unique",
    }),
  controlGroupID: str("controlGroupID"),
  allocation: percent("allocation"),
  primaryMetricTags: strings("primaryMetricTags"),
  secondaryMetricTags: strings("secondaryMetricTags"),
  primaryMetrics: metricRefs("primaryMetrics"),
  secondaryMetrics: metricRefs("secondaryMetrics"),
  otherMetrics: metricRefs("otherMetrics"),
  targetApps: z.union([z.string(), z.array(z.string())], {
    error: "targetApps must be a string or an array of strings",
  }),
  tags: strings("tags"),
  duration: intAbove1("duration"),
  targetExposures: intAbove1("targetExposures"),
  targetingGateID: str("targetingGateID").nullable(),
  sequentialTesting: bool("sequentialTesting"),
  bonferroniCorrection: bool("bonferroniCorrection"),
  bonferroniCorrectionPerMetric: bool("bonferroniCorrectionPerMetric"),
  benjaminiHochbergPerVariant: bool("benjaminiHochbergPerVariant"),
  benjaminiHochbergPerMetric: bool("benjaminiHochbergPerMetric"),
  benjaminiPrimaryMetricsOnly: bool("benjaminiPrimaryMetricsOnly"),
  defaultConfidenceInterval: oneOf("defaultConfidenceInterval", ["80", "90", "95", "98", "99"]),
  manualQualityScores: z
    .array(qualityScoreSchema, { error: "manualQualityScores must be an array" })
    .max(10, { error: "manualQualityScores may hold at most 10 entries" }),
  // Accepted because the DTO lists it; a new experiment is always returned in `setup` (spec).
  status: oneOf("status", EXPERIMENT_STATUSES),
  launchedGroupID: str("launchedGroupID").nullable(),
  creatorID: str("creatorID").nullable(),
  creatorEmail: str("creatorEmail").nullable(),
  team: str("team").nullable(),
  teamID: str("teamID").nullable(),
  assignmentSourceName: str("assignmentSourceName"),
  assignmentSourceExperimentName: str("assignmentSourceExperimentName"),
  isAnalysisOnly: bool("isAnalysisOnly").nullable(),
  allocationDuration: intAbove1("allocationDuration").nullable(),
  cohortedAnalysisDuration: intAbove1("cohortedAnalysisDuration"),
  fixedAnalysisDuration: intAbove1("fixedAnalysisDuration"),
  cohortedMetricsMatureAfterEnd: bool("cohortedMetricsMatureAfterEnd"),
  cohortWaitUntilEndToInclude: bool("cohortWaitUntilEndToInclude"),
  turboMode: bool("turboMode"),
  isSidecar: bool("isSidecar"),
  scheduledReloadHour: z
    .number({ error: "scheduledReloadHour must be an integer from 0 to 23" })
    .int({ error: "scheduledReloadHour must be an integer from 0 to 23" })
    .min(0, { error: "scheduledReloadHour must be an integer from 0 to 23" })
    .max(23, { error: "scheduledReloadHour must be an integer from 0 to 23" })
    .nullable(),
  scheduledReloadType: oneOf("scheduledReloadType", ["full", "incremental"]),
  scheduledReloadDays: z
    .array(
      z
        .number({ error: "scheduledReloadDays items must be integers from 0 to 6" })
        .int({ error: "scheduledReloadDays items must be integers from 0 to 6" })
        .min(0, { error: "scheduledReloadDays items must be integers from 0 to 6" })
        .max(6, { error: "scheduledReloadDays items must be integers from 0 to 6" }),
      { error: "scheduledReloadDays must be an array or null" },
    )
    .nullable(),
  analysisEndTime: str("analysisEndTime"),
  assignmentSourceFilters: z.array(
    z.object({
      column: str("column").optional(),
      condition: oneOf("condition", filterConditions),
      values: strings("values").optional(),
    }),
    { error: "assignmentSourceFilters must be an array" },
  ),
  analyticsType: oneOf("analyticsType", ["frequentist", "bayesian", "sprt"]),
  decisionReason: str("decisionReason"),
  preComputedUserDimensions: nameAndSource,
  cureCovariates: nameAndSource,
  stratifiedSampling: z
    .looseObject(
      { status: oneOf("stratifiedSampling.status", ["pending", "success", "error"]) },
      { error: "stratifiedSampling must be an object or null" },
    )
    .nullable(),
  enabledNonProdEnvironments: strings("enabledNonProdEnvironments"),
  layerID: str("layerID"),
});

/** Everything but `name` is optional; `partial` keeps the rules of the fields that are sent. */
export const experimentCreateBodySchema = experimentCreateSchema
  .partial()
  .extend({ name: experimentCreateSchema.shape.name });
export type ExperimentCreateInput = z.infer<typeof experimentCreateBodySchema>;

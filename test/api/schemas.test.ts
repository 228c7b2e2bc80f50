// The response schemas over the OpenAPI document's own audit_logs example, and over the ways the real
// service is looser than that document (../shared/api/README.md).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  auditLogRecordSchema,
  auditRuleSchema,
  listEnvelopeSchema,
  paginationSchema,
  ruleChangesSchema,
} from "../../src/api/schemas.ts";

const OPENAPI_PATH = "/work/shared/api/console-openapi-subset.json";

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { content?: Record<string, { schema: { example?: unknown } }> }> }
    >
  >;
}

function auditLogsExample(): { data: Record<string, unknown>[]; pagination: unknown; message: string } {
  const doc = JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as OpenApiDocument;
  const example =
    doc.paths["/console/v1/audit_logs"]?.get?.responses["200"]?.content?.["application/json"]?.schema.example;
  if (example === undefined) throw new Error("the OpenAPI document has no audit_logs example");
  return example as { data: Record<string, unknown>[]; pagination: unknown; message: string };
}

describe("schemas over the OpenAPI audit_logs example", () => {
  it("parses the envelope and its pagination, keeping the values", () => {
    const example = auditLogsExample();
    const envelope = listEnvelopeSchema.parse(example);
    expect(envelope.data).toHaveLength(example.data.length);
    expect(envelope.pagination).toMatchObject({ itemsPerPage: 3, pageNumber: 2, totalItems: 829 });
    expect(envelope.pagination.nextPage).toBe("statsigapi.net/console/v1/audit_logs?page=3&limit=3");
    expect(paginationSchema.parse(example.pagination)).toEqual(example.pagination);
  });

  it("parses every example record unchanged, and the rules in their changes", () => {
    const example = auditLogsExample();
    expect(example.data.length).toBeGreaterThan(0);
    for (const record of example.data) {
      const parsed = auditLogRecordSchema.parse(record);
      expect(parsed).toEqual(record); // nothing stripped, nothing added
    }
    const rules = (example.data[0]?.changes as { rules: unknown }).rules;
    const changes = ruleChangesSchema.parse(rules);
    expect(changes.new[0]).toMatchObject({ id: "BfGswoMDcsZ4y9Le1d9O", percentagePass: 100 });
    expect(changes.old[0]?.enabledEnvironments).toEqual(["development", "staging"]);
    expect(auditRuleSchema.safeParse(changes.new[0]).success).toBe(true);
  });
});

describe("tolerant cases the real service sends", () => {
  const base = () => ({ ...auditLogsExample().data[1]! });

  it("takes modifierEmail as a string, an object, null or absent", () => {
    for (const modifierEmail of ["jane@example.com", { email: "jane@example.com", name: "Jane" }, null]) {
      const parsed = auditLogRecordSchema.parse({ ...base(), modifierEmail });
      expect(parsed.modifierEmail).toEqual(modifierEmail);
    }
    const { modifierEmail: _absent, ...without } = { ...base(), modifierEmail: "x" };
    expect(auditLogRecordSchema.parse(without).modifierEmail).toBeUndefined();
  });

  it("takes records without tags (and without modifierEmail and tags together)", () => {
    const record = base();
    expect("tags" in record).toBe(false);
    expect("modifierEmail" in record).toBe(false);
    expect(auditLogRecordSchema.parse(record).tags).toBeUndefined();
    expect(auditLogRecordSchema.parse({ ...record, tags: ["a", "b"] }).tags).toEqual(["a", "b"]);
  });

  it("takes a list envelope without a message", () => {
    const { message: _message, ...withoutMessage } = auditLogsExample();
    expect(listEnvelopeSchema.safeParse(withoutMessage).success).toBe(true);
  });

  it("takes an actionType missing from the specification's list", () => {
    const parsed = auditLogRecordSchema.parse({ ...base(), actionType: "brand_new_action_2031" });
    expect(parsed.actionType).toBe("brand_new_action_2031");
  });

  it("keeps unknown fields, at the top level and inside the envelope", () => {
    const parsed = auditLogRecordSchema.parse({ ...base(), reviewId: "r1", nested: { deep: [1, 2] } });
    expect(parsed).toMatchObject({ reviewId: "r1", nested: { deep: [1, 2] } });
    const envelope = listEnvelopeSchema.parse({ ...auditLogsExample(), requestId: "abc" });
    expect(envelope).toMatchObject({ requestId: "abc" });
  });

  it("rejects what cannot be placed or read: no id, a non-string date, wrong tag types", () => {
    const { id: _id, ...noId } = base();
    expect(auditLogRecordSchema.safeParse(noId).success).toBe(false);
    expect(auditLogRecordSchema.safeParse({ ...base(), date: 20220926 }).success).toBe(false);
    expect(auditLogRecordSchema.safeParse({ ...base(), tags: [1, 2] }).success).toBe(false);
  });
});

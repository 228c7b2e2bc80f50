// The controls' tables, part of the one description of the store's tables (../tables.ts).
import { bigNumber, epochMs, integer, table, text } from "../tableKinds.ts";

export const CONTROL_TABLES = {
  /** One row per finding (control id + record or evidence key): first and last seen by a check. */
  controlFindings: table(
    "control_findings",
    {
      id: text().primaryKey(),
      controlId: text().notNull(),
      kind: text().notNull(),
      severity: text().notNull(),
      recordId: text(),
      entity: text(),
      actionType: text(),
      occurredAt: epochMs(),
      actor: text(),
      message: text().notNull(),
      firstSeenAt: epochMs().notNull(),
      lastSeenAt: epochMs().notNull(),
    },
    // By control (status, the outbox); by record (export's details of a batch).
    (on) => [
      on.index("control_findings_control_idx", "controlId"),
      on.index("control_findings_record_idx", "recordId"),
    ],
  ),

  /** The ticket key a ticket-reference control found for a change. */
  controlTickets: table(
    "control_tickets",
    {
      recordId: text().notNull(),
      controlId: text().notNull(),
      ticket: text().notNull(),
    },
    (on) => [on.primaryKey("recordId", "controlId")],
  ),

  /** One row per check run: the period it evaluated (the next check's default start). */
  controlChecks: table("control_checks", {
    id: bigNumber().primaryKey(),
    checkedAt: epochMs().notNull(),
    periodStart: epochMs().notNull(),
    periodEnd: epochMs().notNull(),
    findings: integer().notNull(),
    /** The store's newest seq when the check read it: records stored later are the next check's too. */
    lastSeq: bigNumber(),
    /** 1: the period was given (--from/--to), so the next default check does not start from it. */
    periodGiven: integer().notNull().default(0),
  }),

  /** Waivers and their withdrawals, append-only, each row hash-linked to the one before (verify walks it). */
  controlWaivers: table(
    "control_waivers",
    {
      seq: bigNumber().primaryKey(),
      findingId: text().notNull(),
      /** waive | unwaive */
      action: text().notNull(),
      reason: text().notNull(),
      byName: text().notNull(),
      /** YYYY-MM-DD, the last day the waiver holds (UTC); NULL: until withdrawn. */
      expires: text(),
      createdAt: epochMs().notNull(),
      hash: text().notNull(),
      chainHash: text().notNull(),
    },
    (on) => [on.index("control_waivers_finding_idx", "findingId")],
  ),

  /** New findings to deliver, one row per sink, written in the transaction that stores the finding. */
  controlOutbox: table(
    "control_outbox",
    {
      findingId: text().notNull(),
      sink: text().notNull(),
      payload: text().notNull(),
      createdAt: epochMs().notNull(),
      attempts: integer().notNull().default(0),
      nextAttemptAt: epochMs().notNull(),
      deliveredAt: epochMs(),
      lastError: text(),
    },
    (on) => [on.primaryKey("findingId", "sink")],
  ),
};

// Contract between the simulator's HTTP core (server, audit log, generator, faults) and its entity
// routes (experiments, layers, dynamic configs, metrics, events). Both sides code against this file.
import type { IncomingHttpHeaders } from "node:http";
import type { AuditRule } from "../api/schemas.ts";

/** An audit log record exactly as the simulator serves it (the real service's field names). */
export interface SimAuditRecord {
  id: string;
  name: string;
  changeLog: string;
  actionType: string;
  date: string;
  time: string;
  updatedBy: string;
  updatedByUserID: string;
  modifierEmail?: string;
  changes: Record<string, unknown>;
  tags?: string[];
  [extra: string]: unknown;
}

export interface SimActor {
  id: string;
  name: string;
  email: string;
}

export interface SimRequest {
  method: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when there was none. Invalid JSON never reaches a route (400). */
  body: unknown;
}

export interface SimResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Sent as is instead of `body` as JSON (bad-server modes); give its content-type in `headers`. */
  rawBody?: string;
}

export interface SimRoute {
  method: "GET" | "POST";
  /** Matched against the pathname; capture groups are passed to handle() decoded. */
  pattern: RegExp;
  /** console: the console API key header; server: the webhook's server secret. */
  auth: "console" | "server";
  handle(request: SimRequest, params: string[]): SimResponse;
}

/** What entity routes need from the audit log: append a record stamped at `at` (epoch ms). */
export interface AuditAppender {
  append(entry: {
    at: number;
    name: string;
    actionType: string;
    changeLog: string;
    actor: SimActor;
    changes?: Record<string, unknown>;
    tags?: string[];
  }): SimAuditRecord;
}

export type ExperimentStatus =
  | "setup"
  | "active"
  | "decision_made"
  | "abandoned"
  | "archived"
  | "experiment_stopped"
  | "assignment_stopped";

/**
 * The history generator reports entity changes here so that entity routes stay consistent with the
 * audit log (e.g. one dynamic config version per config edit). Calls must be cheap: 1M records.
 */
export interface HistoryObserver {
  configChanged(event: {
    configId: string;
    name: string;
    kind: "dynamic_config" | "gate";
    rules: AuditRule[];
    at: number;
    actor: SimActor;
    actionType: string;
  }): void;
  experimentChanged(event: {
    experimentId: string;
    name: string;
    status: ExperimentStatus;
    layerId: string | null;
    at: number;
    actor: SimActor;
    actionType: string;
  }): void;
  /** A layer was created (layer_create): it exists, with no experiment yet. */
  layerCreated(layerId: string): void;
}

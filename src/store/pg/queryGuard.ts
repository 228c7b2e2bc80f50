// What `flagtrail sql` refuses on PostgreSQL (why: ./readOnlyQuery.ts) from EXPLAIN (VERBOSE, FORMAT JSON)
// of the very cursor it will declare, planned and not run: a statement whose plan
// - modifies a table (a ModifyTable node: DML, also inside WITH) or locks rows (LockRows: FOR UPDATE), or
// - calls a function of the deny list below, wherever in the plan (output, filter, FROM, sub-plans).
// The plan is the server's own rendering of the statement (comments, quoting and U& escapes resolved,
// views expanded), which is why it is read rather than the user's text. A denied name inside a string
// literal refuses a harmless query; that errs on the safe side. Functions the deny list misses, and
// functions defined in the database that call them, are the role's to forbid: see README "Privileges".
import { z } from "zod";
import { UsageError } from "../../errors.ts";

/**
 * Built-in functions that read or write the server's files, large objects or other servers, signal
 * backends, change settings, sequences, replication or statistics, take advisory locks, or run a query
 * given as text (query_to_xml and the like run COPY … TO a file through SPI).
 */
const DENIED = new RegExp(
  "^(" +
    [
      "pg_read_\\w*",
      "pg_stat_file",
      "pg_ls_\\w*",
      "pg_file_\\w*",
      "pg_logdir_ls",
      "lo_\\w*",
      "loread",
      "lowrite",
      "dblink\\w*",
      "\\w*_to_xml\\w*",
      "ts_stat",
      "ts_rewrite",
      "set_config",
      "nextval",
      "setval",
      "pg_notify",
      "pg_terminate_backend",
      "pg_cancel_backend",
      "pg_reload_conf",
      "pg_rotate_logfile\\w*",
      "pg_switch_wal",
      "pg_create_\\w*",
      "pg_drop_\\w*",
      "pg_copy_\\w*",
      "pg_replication_\\w*",
      "pg_logical_\\w*",
      "pg_backup_\\w*",
      "pg_start_backup",
      "pg_stop_backup",
      "pg_promote",
      "pg_wal_replay_\\w*",
      "pg_(try_)?advisory_\\w*",
      "pg_stat_reset\\w*",
      "pg_import_system_collations",
      "pg_log_\\w*",
      "pg_restore_\\w*",
      "pg_clear_\\w*",
      "pg_sync_replication_slots",
      "binary_upgrade_\\w*",
      "txid_current",
      "pg_current_xact_id",
    ].join("|") +
    ")$",
);

/** A function call in deparsed SQL: a name, maybe double-quoted, then "(". */
const CALL = /([A-Za-z_][A-Za-z0-9_$]*)"?\s*\(/g;

const nodeSchema: z.ZodType<PlanNode> = z.lazy(() =>
  z.looseObject({ "Node Type": z.string(), Plans: z.array(nodeSchema).optional() }),
);
interface PlanNode {
  "Node Type": string;
  Plans?: PlanNode[] | undefined;
  [key: string]: unknown;
}
const explainSchema = z.tuple([z.object({ Plan: nodeSchema })]);

/** Every string in a plan node's own fields (its children are walked on their own). */
function* strings(value: unknown): Generator<string> {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* strings(item);
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

/** The first denied function a plan node calls, if any. */
function deniedCall(node: PlanNode): string | undefined {
  for (const [key, value] of Object.entries(node)) {
    if (key === "Plans") continue;
    for (const text of strings(value)) {
      if (key === "Function Name" && DENIED.test(text.toLowerCase())) return text;
      for (const [, name] of text.matchAll(CALL)) if (DENIED.test(name!.toLowerCase())) return name;
    }
  }
  return undefined;
}

/** Throws a UsageError when the plan (EXPLAIN … FORMAT JSON's one value) may change or reach anything. */
export function refuseUnsafePlan(explained: unknown): void {
  const [{ Plan }] = explainSchema.parse(explained);
  for (const node of nodes(Plan)) {
    if (node["Node Type"] === "ModifyTable" || node["Node Type"] === "LockRows") {
      throw new UsageError(
        `refused: the statement ${node["Node Type"] === "LockRows" ? "locks rows (FOR UPDATE/SHARE)" : "modifies a table"}; flagtrail sql runs read queries only, and nothing was run`,
      );
    }
    const name = deniedCall(node);
    if (name !== undefined) {
      throw new UsageError(
        `refused: the query calls ${name}(), which reaches beyond the store's tables (files, large objects, other servers, settings or sessions); flagtrail sql does not run it, and nothing was run`,
      );
    }
  }
}

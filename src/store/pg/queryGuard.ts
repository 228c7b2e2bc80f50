// What `flagtrail sql` refuses on PostgreSQL (why: ./readOnlyQuery.ts), from EXPLAIN (VERBOSE, FORMAT JSON)
// of the cursor it will declare: a plan that modifies a table (ModifyTable, also in WITH), locks rows, or
// calls a denied function anywhere. The plan, not the text, is read: the server resolved comments, quoting,
// U& escapes and views. A denied name in a string literal refuses a harmless query (the safe side); what the
// list misses, and functions calling it, are the role's to forbid (README "Privileges").
import { z } from "zod";
import { UsageError } from "../../errors.ts";

/** Built-in functions that reach beyond the store's tables, by what they reach. */
const DENIED = new RegExp(
  `^(${[
    "pg_read_\\w*|pg_stat_file|pg_ls_\\w*|pg_file_\\w*|pg_logdir_ls", // the server's files
    "lo_\\w*|loread|lowrite|dblink\\w*", // large objects, other servers
    // a query given as text: query_to_xml and the like run COPY … TO a file through SPI
    "\\w*_to_xml\\w*|ts_stat|ts_rewrite",
    "set_config|nextval|setval|pg_notify", // settings, sequences, notifications
    // the server's settings (paths, connection strings) and other sessions (their queries, addresses)
    "current_setting|pg_show_all_settings|pg_stat_get_activity|pg_stat_get_backend_\\w*",
    // signal backends or the server
    "pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile\\w*|pg_switch_wal",
    "pg_create_\\w*|pg_drop_\\w*|pg_copy_\\w*|pg_replication_\\w*|pg_logical_\\w*", // replication
    "pg_backup_\\w*|pg_start_backup|pg_stop_backup|pg_promote|pg_wal_replay_\\w*", // backup, recovery
    "pg_(try_)?advisory_\\w*", // advisory locks
    // statistics, catalogs, backends' logs
    "pg_stat_reset\\w*|pg_import_system_collations|pg_log_\\w*|pg_restore_\\w*|pg_clear_\\w*",
    "pg_sync_replication_slots|binary_upgrade_\\w*|txid_current|pg_current_xact_id", // slots, upgrade, an xid
  ].join("|")})$`,
);

/** A function call in deparsed SQL: a name, maybe double-quoted, then "(". */
const CALL = /([A-Za-z_][A-Za-z0-9_$]*)"?\s*\(/g;

const nodeSchema = z.looseObject({
  "Node Type": z.string(),
  get Plans() {
    return z.array(nodeSchema).optional();
  },
});
type PlanNode = z.infer<typeof nodeSchema>;
const explainSchema = z.tuple([z.object({ Plan: nodeSchema })]);

/** The first denied function a plan node calls in its own fields (strings, or lists of them), if any. */
function deniedCall(node: PlanNode): string | undefined {
  for (const [key, value] of Object.entries(node)) {
    if (key === "Plans") continue;
    for (const text of [value].flat(Infinity)) {
      if (typeof text !== "string") continue;
      if (key === "Function Name" && DENIED.test(text.toLowerCase())) return text;
      for (const [, name] of text.matchAll(CALL)) if (DENIED.test(name!.toLowerCase())) return name;
    }
  }
  return undefined;
}

function refuseUnsafeNode(node: PlanNode): void {
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
  for (const child of node.Plans ?? []) refuseUnsafeNode(child);
}

/** Throws a UsageError when the plan (EXPLAIN … FORMAT JSON's one value) may change or reach anything. */
export function refuseUnsafePlan(explained: unknown): void {
  refuseUnsafeNode(explainSchema.parse(explained)[0].Plan);
}

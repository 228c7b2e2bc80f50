// `flagtrail status`: what the store holds, how complete it is, and how the last runs went.
import type { Command } from "commander";
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { openStore } from "../store/open.ts";
import { formatStatus, readStatus } from "../store/status.ts";
import { parseOptions } from "./options.ts";

const statusOptionsSchema = z.object({
  db: z.string().optional(),
  json: z.boolean().default(false),
});

export function register(program: Command): void {
  program
    .command("status")
    .description(
      "Show what the store holds: records, checkpoints, last runs, coverage gaps, quarantine, mutations.",
    )
    .option("--db <path>", "SQLite database (env FLAGTRAIL_DB, default ./flagtrail.db)")
    .option("--json", "print as JSON")
    .action((raw: Record<string, unknown>) => {
      const options = parseOptions(statusOptionsSchema, raw);
      // Read-only: status never migrates or writes, so it is safe while a sync runs.
      const store = openStore(resolveDbPath(options), { readonly: true });
      try {
        const status = readStatus(store);
        process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
      } finally {
        store.close();
      }
    });
}

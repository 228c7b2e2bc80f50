// `flagtrail status`: what the store holds, how complete it is, and how the last runs went.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { openStore } from "../store/open.ts";
import { formatStatus, readStatus } from "../store/status.ts";
import { parseOptions } from "./options.ts";

const statusOptionsSchema = z.object({
  db: z.string().optional(),
  json: z.boolean().default(false),
});

export function action(raw: Record<string, unknown>): void {
  const options = parseOptions(statusOptionsSchema, raw);
  // Read-only: status never migrates or writes, so it is safe while a sync runs.
  const store = openStore(resolveDbPath(options), { readonly: true });
  try {
    const status = readStatus(store);
    process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  } finally {
    store.close();
  }
}

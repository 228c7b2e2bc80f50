// `flagtrail status`: what the store holds, how complete it is, and how the last runs went.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { openAnyStore } from "../store/openAny.ts";
import { formatStatus, readStatus } from "../store/status.ts";
import { parseOptions } from "./options.ts";

const statusOptionsSchema = z.object({
  db: z.string().optional(),
  json: z.boolean().default(false),
});

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(statusOptionsSchema, raw);
  // Read-only: status never migrates or writes, so it is safe while a sync runs.
  const store = await openAnyStore(resolveDbPath(options), { readonly: true });
  try {
    const status = await readStatus(store);
    process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  } finally {
    await store.close();
  }
}

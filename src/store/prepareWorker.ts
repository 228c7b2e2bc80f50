// The worker thread of src/store/preparer.ts: prepares pages of audit records (prepareRecords: zod,
// canonical JSON and SHA-256, time parsing, rule diffs) while the main thread fetches and writes.
// Pure work, no database: it imports records.ts alone, so it starts without the store's modules.
import { parentPort } from "node:worker_threads";
import { z } from "zod";
import { prepareRecords } from "./records.ts";

const requestSchema = z.object({ id: z.number().int(), records: z.array(z.unknown()) });

parentPort?.on("message", (message: unknown) => {
  const request = requestSchema.safeParse(message);
  if (!request.success) return;
  const { id, records } = request.data;
  try {
    parentPort?.postMessage({ id, prepared: prepareRecords(records) });
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});

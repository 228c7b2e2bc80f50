// The prepare worker's thread (./preparer.ts): parses a page's response body and prepares its records
// (validation, canonical JSON and SHA-256, time parsing, rule diffs) while the main thread fetches and
// writes. Pure work, no database: it loads the record modules only.
import { parentPort } from "node:worker_threads";
import { z } from "zod";
import { listEnvelopeSchema } from "../api/schemas.ts";
import { encodePrepared } from "./preparedWire.ts";

const requestSchema = z.object({ id: z.number().int(), body: z.string() });

parentPort?.on("message", (message: unknown) => {
  const request = requestSchema.safeParse(message);
  if (!request.success) return;
  const { id, body } = request.data;
  try {
    // The main thread parsed this very text already and found a list envelope.
    const records = listEnvelopeSchema.parse(JSON.parse(body)).data;
    const wire = encodePrepared(records, body);
    parentPort?.postMessage({ id, wire }, [wire.numbers.buffer]);
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});

// The report manifest's format, shared by its writer (src/report/manifest.ts) and its checker
// (src/verify/manifest.ts): manifest_<from>_<to>.json says what was asked, what was written (row
// counts, SHA-256 of every file) and the store's hash-chain head (each project's, for a report over
// several), optionally signed with HMAC-SHA256 over its canonical JSON. The signing key comes from
// FLAGTRAIL_SIGNING_KEY and is never written anywhere.
import { createHash, createHmac } from "node:crypto";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { canonicalJson } from "../hash.ts";
import { projectNameSchema } from "../projects.ts";
import { REPORT_FORMATS } from "../report/formats.ts";

export const MANIFEST_FORMAT = "flagtrail-report-manifest/1";
/**
 * A report over several projects of one store: its `store` is each project's (records, chain head),
 * a shape a reader of format 1 cannot take for one store's, hence a format of its own. A report of
 * one project keeps format 1.
 */
export const MANIFEST_FORMAT_PROJECTS = "flagtrail-report-manifest/2";

const fileEntrySchema = z.object({
  name: z
    .string()
    .min(1)
    .refine((name) => basename(name) === name && name !== "." && name !== "..", {
      message: "a manifest lists file names in its own directory, not paths",
    }),
  rows: z.number().int().nonnegative(),
  /** A CSV's column headers, in order: the evidence package says what its tables hold. */
  columns: z.array(z.string()).optional(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/** A store's (or one project's) state when the report read it. */
const storeStateSchema = z.object({
  records: z.number().int().nonnegative(),
  chainHead: z.object({ seq: z.number().int().nonnegative(), chainHash: z.string() }).nullable(),
});

const commonFields = {
  flagtrailVersion: z.string(),
  generatedAt: z.string(),
  parameters: z.object({
    from: z.string(),
    to: z.string(),
    timeZone: z.string(),
    actionTypes: z.array(z.string()).nullable(),
    formats: z.array(z.enum(REPORT_FORMATS)),
    /** The one project asked for (absent: the store's projects, all of them, or `default`). */
    project: projectNameSchema.optional(),
  }),
  period: z.object({ start: z.number().int(), end: z.number().int() }),
  files: z.array(fileEntrySchema),
  /** Files of an earlier report this one overwrote (forced): their names, sizes and hashes before. */
  replaced: z.array(fileEntrySchema.omit({ rows: true, columns: true })).optional(),
  signature: z
    .object({ algorithm: z.literal("HMAC-SHA256"), value: z.string().regex(/^[0-9a-f]{64}$/) })
    .optional(),
};

export const manifestSchema = z.discriminatedUnion("format", [
  z.object({ format: z.literal(MANIFEST_FORMAT), ...commonFields, store: storeStateSchema }),
  z.object({
    format: z.literal(MANIFEST_FORMAT_PROJECTS),
    ...commonFields,
    store: z.object({
      projects: z.array(storeStateSchema.extend({ project: projectNameSchema })).min(2),
      // No chain head of the whole: there is one per project, above. Declared absent so that a reader
      // of `store.chainHead` reads both formats (undefined: nothing to compare).
      chainHead: z.never().optional(),
    }),
  }),
]);

export type Manifest = z.infer<typeof manifestSchema>;
/** A manifest before it is signed (either format). */
export type ManifestBody = Manifest extends infer M
  ? M extends unknown
    ? Omit<M, "signature">
    : never
  : never;
export type ManifestFile = z.infer<typeof fileEntrySchema>;
export type ManifestReplaced = NonNullable<Manifest["replaced"]>;
export type ManifestStoreState = z.infer<typeof storeStateSchema>;

/**
 * The chain head a manifest holds for `project`: format 1's only one, or that project's in format 2
 * (undefined when it names none), for a check of the store against the report.
 */
export function manifestChainHead(
  manifest: Manifest,
  project: string | undefined,
): ManifestStoreState["chainHead"] | undefined {
  if (manifest.format === MANIFEST_FORMAT) return manifest.store.chainHead;
  return manifest.store.projects.find((p) => p.project === project)?.chainHead;
}

/**
 * SHA-256 and size of a file, read through one 64 KiB buffer: a read stream's fresh buffer per chunk is
 * memory outside the JS heap that only a garbage collection returns (a report's ~10 MB of files, hashed
 * once or twice each, grew its peak RSS by several MB).
 */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(1 << 16);
  let bytes = 0;
  const file = await open(path, "r");
  try {
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } finally {
    await file.close();
  }
  return { sha256: hash.digest("hex"), bytes };
}

/** HMAC-SHA256 (hex) of a manifest body (without its signature), over its canonical JSON. */
export function manifestHmac(body: unknown, key: string): string {
  return createHmac("sha256", key).update(canonicalJson(body)).digest("hex");
}

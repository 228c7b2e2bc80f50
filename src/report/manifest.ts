// manifest_<from>_<to>.json: what was asked, what was written (row counts, SHA-256 of every file) and
// the store's hash-chain head, optionally signed with HMAC-SHA256 over its canonical JSON. The signing
// key comes from FLAGTRAIL_SIGNING_KEY and is never written anywhere.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { IntegrityError, UsageError } from "../errors.ts";
import { canonicalJson } from "../store/hash.ts";

export const MANIFEST_FORMAT = "flagtrail-report-manifest/1";

const fileEntrySchema = z.object({
  name: z
    .string()
    .min(1)
    .refine((name) => basename(name) === name && name !== "." && name !== "..", {
      message: "a manifest lists file names in its own directory, not paths",
    }),
  rows: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export const manifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  flagtrailVersion: z.string(),
  generatedAt: z.string(),
  parameters: z.object({
    from: z.string(),
    to: z.string(),
    timeZone: z.string(),
    actionTypes: z.array(z.string()).nullable(),
    formats: z.array(z.enum(["csv", "md"])),
  }),
  period: z.object({ start: z.number().int(), end: z.number().int() }),
  files: z.array(fileEntrySchema),
  store: z.object({
    records: z.number().int().nonnegative(),
    chainHead: z.object({ seq: z.number().int().nonnegative(), chainHash: z.string() }).nullable(),
  }),
  signature: z
    .object({ algorithm: z.literal("HMAC-SHA256"), value: z.string().regex(/^[0-9a-f]{64}$/) })
    .optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestFile = z.infer<typeof fileEntrySchema>;

export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), bytes };
}

function hmac(body: unknown, key: string): string {
  return createHmac("sha256", key).update(canonicalJson(body)).digest("hex");
}

export function signManifest(body: Omit<Manifest, "signature">, key: string | undefined): Manifest {
  if (!key) return body;
  return { ...body, signature: { algorithm: "HMAC-SHA256", value: hmac(body, key) } };
}

export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

async function readManifest(path: string): Promise<{ manifest: Manifest; raw: Record<string, unknown> }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read manifest ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new IntegrityError(`manifest ${path} is not valid JSON`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IntegrityError(
      `manifest ${path} is malformed at ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
    );
  }
  return { manifest: parsed.data, raw: json as Record<string, unknown> };
}

export interface ManifestCheck {
  manifest: Manifest;
  files: number;
  /** true: signature valid; false: no key to check it with; (a bad signature throws). */
  signatureChecked: boolean;
}

/**
 * Re-hashes every file the manifest lists (in the manifest's directory) and, when a key is given,
 * checks the signature. The first mismatch throws an IntegrityError naming it.
 */
export async function verifyManifest(path: string, key: string | undefined): Promise<ManifestCheck> {
  const { manifest, raw } = await readManifest(path);
  const dir = dirname(path);
  for (const file of manifest.files) {
    const filePath = join(dir, file.name);
    try {
      await stat(filePath);
    } catch {
      throw new IntegrityError(`${file.name}: listed in the manifest but missing`);
    }
    const actual = await hashFile(filePath);
    if (actual.sha256 !== file.sha256 || actual.bytes !== file.bytes) {
      throw new IntegrityError(
        `${file.name}: SHA-256 ${actual.sha256} (${actual.bytes} bytes) differs from the manifest's ` +
          `${file.sha256} (${file.bytes} bytes)`,
      );
    }
  }
  if (!key) return { manifest, files: manifest.files.length, signatureChecked: false };
  if (!manifest.signature) {
    throw new IntegrityError(
      "the manifest is not signed but FLAGTRAIL_SIGNING_KEY is set: the signature may have been removed",
    );
  }
  // Signed over the file's own JSON (minus the signature), so an added field also breaks it.
  const { signature: _signature, ...body } = raw;
  const expected = Buffer.from(hmac(body, key), "hex");
  const actual = Buffer.from(manifest.signature.value, "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new IntegrityError(
      "the manifest's HMAC-SHA256 signature does not match (wrong key, or the manifest was edited)",
    );
  }
  return { manifest, files: manifest.files.length, signatureChecked: true };
}

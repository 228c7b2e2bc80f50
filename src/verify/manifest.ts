// `flagtrail verify --manifest`: re-hash every file a report manifest lists and, with the key, check
// its signature. The first mismatch throws an IntegrityError naming it.
import { readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { FlagtrailError, IntegrityError, UsageError } from "../errors.ts";
import { hexDigestsEqual } from "../hash.ts";
import {
  hashFile,
  MANIFEST_FORMAT,
  MANIFEST_FORMAT_PROJECTS,
  type Manifest,
  manifestHmac,
  manifestSchema,
} from "../manifest/format.ts";

const MANIFEST_FORMAT_PREFIX = "flagtrail-report-manifest/";
const KNOWN_FORMATS = new Set<string>([MANIFEST_FORMAT, MANIFEST_FORMAT_PROJECTS]);

export interface ReadManifest {
  path: string;
  manifest: Manifest;
  /** The file's JSON as read: the signature covers it whole, fields this version does not know included. */
  raw: Record<string, unknown>;
}

/** Whether `raw`'s signature is the HMAC of the rest of it under `key`. */
function signedWith(raw: Record<string, unknown>, value: string, key: string): boolean {
  const { signature: _signature, ...body } = raw;
  return hexDigestsEqual(manifestHmac(body, key), value);
}

const SIGNATURE_MISMATCH =
  "the manifest's HMAC-SHA256 signature does not match (wrong key, or the manifest was edited)";

/**
 * A JSON file that is not a manifest this flagtrail reads: another file given by mistake (bad input), a
 * newer flagtrail's manifest, or a manifest whose format was edited. One that carries a signature or a
 * manifest's fields is a manifest: with the key, its signature tells an edit from a newer format.
 */
function assertReadable(path: string, json: unknown, key: string | undefined): void {
  const object = json !== null && typeof json === "object" ? (json as Record<string, unknown>) : {};
  const { format, signature } = object;
  const signed = (signature as { value?: unknown } | undefined)?.value;
  if (typeof signed === "string" && key && !KNOWN_FORMATS.has(String(format)))
    if (!signedWith(object, signed, key)) throw new IntegrityError(SIGNATURE_MISMATCH, "manifest-signature");
  const manifestLike = typeof format === "string" && format.startsWith(MANIFEST_FORMAT_PREFIX);
  // Another JSON file given by mistake (a config, a finding export) is bad input, not a broken manifest.
  const manifestFields = "files" in object && "flagtrailVersion" in object;
  if (!manifestLike && signed === undefined && !manifestFields) {
    throw new UsageError(
      `${path} is not a flagtrail report manifest (it has no "format": "${MANIFEST_FORMAT_PREFIX}…").`,
    );
  }
  if (manifestLike && !KNOWN_FORMATS.has(format) && !manifestSchema.safeParse(json).success) {
    throw new FlagtrailError(
      `${path} is a manifest of format ${format}, written by a newer flagtrail; upgrade flagtrail to check it.`,
    );
  }
}

/** Reads a manifest; `key` (FLAGTRAIL_SIGNING_KEY) tells a signed manifest whose format was edited. */
export async function readManifest(path: string, key?: string): Promise<ReadManifest> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(`Cannot read the manifest ${path} (${code}).`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new IntegrityError(`manifest ${path} is not valid JSON`, "manifest-json");
  }
  assertReadable(path, json, key);
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IntegrityError(
      `manifest ${path} is malformed at ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
      "manifest-malformed",
    );
  }
  return { path, manifest: parsed.data, raw: json as Record<string, unknown> };
}

export interface ManifestCheck {
  manifest: Manifest;
  files: number;
  /** true: signature valid; false: no key to check it with; (a bad signature throws). */
  signatureChecked: boolean;
}

/** Re-hashes the files of a manifest already read and, when a key is given, checks its signature. */
export async function checkManifest(read: ReadManifest, key: string | undefined): Promise<ManifestCheck> {
  const { manifest, raw } = read;
  const dir = dirname(read.path);
  for (const file of manifest.files) {
    const filePath = join(dir, file.name);
    try {
      await stat(filePath);
    } catch {
      throw new IntegrityError(
        `${file.name}: listed in the manifest but missing`,
        `file-${file.name}-missing`,
      );
    }
    const actual = await hashFile(filePath);
    if (actual.sha256 !== file.sha256 || actual.bytes !== file.bytes) {
      throw new IntegrityError(
        `${file.name}: SHA-256 ${actual.sha256} (${actual.bytes} bytes) differs from the manifest's ` +
          `${file.sha256} (${file.bytes} bytes)`,
        `file-${file.name}-hash`,
      );
    }
  }
  if (!key) return { manifest, files: manifest.files.length, signatureChecked: false };
  if (!manifest.signature) {
    throw new IntegrityError(
      "the manifest is not signed but FLAGTRAIL_SIGNING_KEY is set: the signature may have been removed",
      "manifest-unsigned",
    );
  }
  // Signed over the file's own JSON (minus the signature), so an added field also breaks it.
  if (!signedWith(raw, manifest.signature.value, key))
    throw new IntegrityError(SIGNATURE_MISMATCH, "manifest-signature");
  return { manifest, files: manifest.files.length, signatureChecked: true };
}

/** Reads a manifest, re-hashes its files and checks its signature when a key is given. */
export async function verifyManifest(path: string, key: string | undefined): Promise<ManifestCheck> {
  return checkManifest(await readManifest(path, key), key);
}

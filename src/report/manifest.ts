// The report's side of manifest_<from>_<to>.json: sign and serialise it. Its format (schema, file
// hashing, HMAC) is shared with `flagtrail verify` in src/manifest/format.ts.
import { type Manifest, manifestHmac } from "../manifest/format.ts";

export {
  hashFile,
  MANIFEST_FORMAT,
  type Manifest,
  type ManifestFile,
  type ManifestReplaced,
  manifestSchema,
} from "../manifest/format.ts";

export function signManifest(body: Omit<Manifest, "signature">, key: string | undefined): Manifest {
  if (!key) return body;
  return { ...body, signature: { algorithm: "HMAC-SHA256", value: manifestHmac(body, key) } };
}

export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

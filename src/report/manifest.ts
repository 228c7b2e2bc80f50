// The report's side of manifest_<from>_<to>.json: sign and serialise it. Its format (schema, file
// hashing, HMAC) is shared with `flagtrail verify` in src/manifest/format.ts.
import { type Manifest, type ManifestBody, manifestHmac } from "../manifest/format.ts";

export {
  hashFile,
  MANIFEST_FORMAT,
  MANIFEST_FORMAT_PROJECTS,
  type Manifest,
  type ManifestBody,
  type ManifestFile,
  type ManifestReplaced,
  type ManifestStoreState,
} from "../manifest/format.ts";

export function signManifest(body: ManifestBody, key: string | undefined): Manifest {
  if (!key) return body;
  return { ...body, signature: { algorithm: "HMAC-SHA256", value: manifestHmac(body, key) } };
}

export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

// `flagtrail verify`: re-walk the store's hash chain and check what it does not cover against its
// digests (src/verify/store.ts); with --manifest, re-hash a report's files and check its signature
// (src/verify/manifest.ts). Any mismatch is an IntegrityError (exit 1) naming the first broken thing.
// With several projects in the store each project's part is verified on its own and reported under its
// name; one failing leaves the others checked, and the exit code and sentence name it.

import { existsSync } from "node:fs";
import { z } from "zod";
import { resolveDbPath, storeNamed } from "../config.ts";
import { UsageError } from "../errors.ts";
import { MANIFEST_FORMAT_PROJECTS, manifestChainHead } from "../manifest/format.ts";
import { signingKeyFromEnv } from "../signingKey.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { describeLocation, localStoreFile, parseStoreLocation } from "../storeLocation.ts";
import { checkManifest, type ReadManifest, readManifest } from "../verify/manifest.ts";
import { type StoreCheck, type VerifyStoreOptions, verifyStore } from "../verify/store.ts";
import type { TableCheck } from "../verify/tables.ts";
import { parseOptions, storeOptionsShape } from "./options.ts";
import { describeFailure, type ProjectOutcome, throwIfFailed } from "./project.ts";
import { readProjectOption, withReadProjects } from "./readProjects.ts";

const verifyOptionsSchema = z.object({
  ...storeOptionsShape,
  manifest: z.string().min(1).optional(),
  ...readProjectOption,
});

type VerifyOptions = z.infer<typeof verifyOptionsSchema>;

function tableText(name: string, check: TableCheck): string {
  const rows = `${name}: ${check.rows} ${check.rows === 1 ? "row" : "rows"}`;
  return check.digest === "matched"
    ? `${rows} ${check.rows === 1 ? "matches its" : "match their"} digest`
    : `${rows}, no digest yet (the store was never synced)`;
}

/** Says exactly what was compared, and what cannot be (docs/reports.md "flagtrail verify"). */
function storeText(check: StoreCheck): string[] {
  return [
    check.head
      ? `hash chain of ${check.records} records intact (head seq ${check.head.seq} ${check.head.chainHash.slice(0, 12)}…)`
      : "store is empty",
    `copied and derived columns (occurred_at, server_day) match the raw records; ` +
      `${check.ruleDiffs} rule diffs recomputed and equal` +
      (check.staleRuleDiffs > 0
        ? ` (${check.staleRuleDiffs} of an older diff version not compared; the next sync recomputes them)`
        : "") +
      `; ${check.revisions} stored revisions re-hashed`,
    `${tableText("quarantine", check.quarantine)}; ${tableText("coverage", check.coverage)}`,
    check.signature === "valid"
      ? "chain head signature valid"
      : "chain head signature not checked (FLAGTRAIL_SIGNING_KEY not set)",
    check.entities === null
      ? "entity chain not read (a PostgreSQL store holds no entity history yet)"
      : check.entities.head
        ? `entity chain of ${check.entities.rows} rows intact (config versions, revisions, experiment and metric snapshots; head ${check.entities.head.hash.slice(0, 12)}…${check.entities.signature === "valid" ? ", signature valid" : ""})`
        : "no entity history",
    check.waivers === 0
      ? "no waivers"
      : `waiver register of ${check.waivers} rows intact (each re-hashed and linked, its last the head meta records)`,
    "not checkable: first_seen_at, sync_run_id (and the times entity rows were read)",
  ];
}

/**
 * Which chain head a manifest says its report read, per project verified. A combined report's manifest
 * (format 2) holds each project's; a one-project report's holds one, named by `parameters.project` unless
 * it was the store's only project: verified among several, that one is the user's to name.
 */
function manifestHeadsFor(
  manifest: ReadManifest | null,
  projects: readonly ProjectStore[],
): (project: string) => VerifyStoreOptions["manifestHead"] {
  if (!manifest) return () => undefined;
  const body = manifest.manifest;
  if (body.format === MANIFEST_FORMAT_PROJECTS) return (project) => manifestChainHead(body, project);
  const named = body.parameters.project;
  if (named !== undefined) {
    if (!projects.some((p) => p.project === named)) {
      throw new UsageError(
        `The manifest is a report of project ${named}, which is not among those verified.`,
      );
    }
    return (project) => (project === named ? body.store.chainHead : undefined);
  }
  if (projects.length > 1) {
    throw new UsageError(
      `The manifest records one chain head, not whose, and the store holds ${projects.length} projects (${projects.map((p) => p.project).join(", ")}): pass --project with the project its report covers.`,
    );
  }
  return () => body.store.chainHead;
}

/** Verifies each project's part of the store; the lines to print, or the failure naming the projects. */
async function verifyProjects(
  dbPath: string,
  project: string | undefined,
  manifest: ReadManifest | null,
  signingKey: string | undefined,
): Promise<string[]> {
  return withReadProjects(dbPath, project, async (projects) => {
    // One at a time: each walk reads its whole chain, and one project failing leaves the others checked.
    const manifestHead = manifestHeadsFor(manifest, projects);
    const outcomes: ProjectOutcome<StoreCheck>[] = [];
    for (const { project: name, store } of projects) {
      try {
        outcomes.push({
          project: name,
          ok: true,
          value: await verifyStore(store, { signingKey, manifestHead: manifestHead(name) }),
        });
      } catch (error) {
        outcomes.push({ project: name, ok: false, error });
      }
    }
    if (outcomes.length === 1) {
      throwIfFailed(outcomes);
      const [only] = outcomes;
      return only?.ok ? storeText(only.value) : [];
    }
    // The projects that verified are reported before the failure that names the others.
    for (const o of outcomes) {
      process.stdout.write(
        o.ok
          ? `Project ${o.project}: OK: ${storeText(o.value).join("; ")}\n`
          : `Project ${o.project}: FAILED: ${describeFailure(o.error, o.project)}\n`,
      );
    }
    throwIfFailed(outcomes);
    return [];
  });
}

/**
 * Whether to check the store. An auditor may hold the report without the store: with --manifest and no
 * store named, a missing default store leaves only the files checked. A store named (--db, --db-file,
 * FLAGTRAIL_DB) is always checked, so one that cannot be read fails the run.
 */
function shouldCheckStore(options: VerifyOptions, dbPath: string): boolean {
  if (options.manifest === undefined || storeNamed(options)) return true;
  const file = localStoreFile(parseStoreLocation(dbPath));
  return file === null || existsSync(file);
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(verifyOptionsSchema, raw);
  const dbPath = resolveDbPath(options);
  const signingKey = signingKeyFromEnv();
  const parts: string[] = [];
  const checkStore = shouldCheckStore(options, dbPath);
  const manifest: ReadManifest | null = options.manifest
    ? await readManifest(options.manifest, signingKey)
    : null;
  if (checkStore) parts.push(...(await verifyProjects(dbPath, options.project, manifest, signingKey)));
  if (manifest) {
    const check = await checkManifest(manifest, signingKey);
    parts.push(
      `${check.files} report files match the manifest` +
        (check.signatureChecked
          ? ", signature valid"
          : ", signature not checked (FLAGTRAIL_SIGNING_KEY not set)") +
        (checkStore
          ? ""
          : `; store not checked (no database at ${describeLocation(parseStoreLocation(dbPath))})`),
    );
  }
  if (parts.length > 0) process.stdout.write(`OK: ${parts.join("; ")}\n`);
}

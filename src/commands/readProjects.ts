// The read commands' side of several projects in one store (status, verify, sql): `--project NAME`
// reads that project's part of the store only; without it, every project the store holds. One project
// read prints exactly what a single-project store always printed; only several get their names shown.
import { projectNameSchema } from "../projects.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../store/projectStores.ts";

/** The `--project` option of a read command, validated like a config's project names. */
export const readProjectOption = { project: projectNameSchema.optional() } as const;

/** Opens the projects read (read-only: safe while a sync runs), hands them to `use`, closes them after. */
export async function withReadProjects<T>(
  dbPath: string,
  project: string | undefined,
  use: (projects: readonly ProjectStore[]) => Promise<T>,
): Promise<T> {
  const projects = await openStoreProjects(dbPath, { readonly: true, project });
  try {
    return await use(projects);
  } finally {
    await closeProjectStores(projects);
  }
}

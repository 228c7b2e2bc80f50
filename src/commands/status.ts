// `flagtrail status`: what the store holds, how complete it is, and how the last runs went; with several
// projects in the store, the same for each project's part under its name.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { type ControlsStatus, controlsStatusText, readControlsStatus } from "../controls/status.ts";
import { readSinksStatus, type SinkStatus, sinksStatusText } from "../export/sinks/sinkStatus.ts";
import { parseOptions, storeOptionsShape } from "./options.ts";
import { readProjectOption, withReadProjects } from "./readProjects.ts";
import { formatStatus } from "./statusText.ts";
import { readStatus, type StoreStatus } from "./storeStatus.ts";

const statusOptionsSchema = z.object({
  ...storeOptionsShape,
  json: z.boolean().default(false),
  ...readProjectOption,
});

type Status = StoreStatus & { controls: ControlsStatus; sinks: SinkStatus[] };

const textOf = (status: Status) =>
  formatStatus(status) + controlsStatusText(status.controls) + sinksStatusText(status.sinks);

/** One project's status as printed: as it always was, or under its name when there are several. */
function formatStatuses(statuses: readonly { project: string; status: Status }[], json: boolean): string {
  const [only] = statuses;
  if (statuses.length === 1 && only) {
    return json ? `${JSON.stringify(only.status, null, 2)}\n` : textOf(only.status);
  }
  if (json) {
    const projects = statuses.map(({ project, status }) => ({ project, ...status }));
    return `${JSON.stringify({ projects }, null, 2)}\n`;
  }
  return statuses.map(({ project, status }) => `Project ${project}\n${textOf(status)}`).join("\n");
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(statusOptionsSchema, raw);
  // Read-only: status never migrates or writes, so it is safe while a sync runs.
  const text = await withReadProjects(resolveDbPath(options), options.project, async (projects) => {
    const statuses: { project: string; status: Status }[] = [];
    for (const { project, store } of projects) {
      const status = await readStatus(store);
      const controls = await readControlsStatus(store);
      const sinks = await readSinksStatus(store, project, status.records.total, controls.undelivered);
      statuses.push({ project, status: { ...status, controls, sinks } });
    }
    return formatStatuses(statuses, options.json);
  });
  process.stdout.write(text);
}

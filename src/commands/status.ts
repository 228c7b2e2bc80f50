// `flagtrail status`: what the store holds, how complete it is, and how the last runs went; with several
// projects in the store, the same for each project's part under its name.
import { z } from "zod";
import { resolveDbPath } from "../config.ts";
import { isSiemSink, parseControlsConfig } from "../controls/config.ts";
import { type ControlsStatus, controlsStatusText, readControlsStatus } from "../controls/status.ts";
import { UsageError } from "../errors.ts";
import { readSinksStatus, type SinkStatus, sinksStatusText } from "../export/sinks/sinkStatus.ts";
import { configFileOf, readConfigText } from "../projects.ts";
import { parseOptions, storeOptionsShape } from "./options.ts";
import { readProjectOption, withReadProjects } from "./readProjects.ts";
import { formatStatus } from "./statusText.ts";
import { readStatus, type StoreStatus } from "./storeStatus.ts";

const statusOptionsSchema = z.object({
  ...storeOptionsShape,
  json: z.boolean().default(false),
  ...readProjectOption,
  config: z.string().min(1).optional(),
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

/**
 * The SIEM sinks of the config file (none without one), so that a sink that never delivered is listed
 * too. Status needs no config, and one it cannot use (another user's 0600 file, an edit under way) does
 * not keep it from showing the store: said on stderr, only the sinks the store knows are listed.
 */
function configuredSiemSinks(configOption: string | undefined): string[] {
  const file = configFileOf(configOption);
  if (file === undefined) return [];
  try {
    return parseControlsConfig(readConfigText(file), file)
      .sinks.filter(isSiemSink)
      .map((s) => s.name);
  } catch (error) {
    // The config's errors name the file and the field, never a value (a sink's url may carry a token).
    if (!(error instanceof UsageError)) throw error;
    const why = error.message.replace(/\.$/, "");
    process.stderr.write(`flagtrail: warning: ${why}; SIEM sinks that never delivered are not listed.\n`);
    return [];
  }
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = parseOptions(statusOptionsSchema, raw);
  const configured = configuredSiemSinks(options.config);
  // Read-only: status never migrates or writes, so it is safe while a sync runs.
  const text = await withReadProjects(resolveDbPath(options), options.project, async (projects) => {
    const statuses: { project: string; status: Status }[] = [];
    for (const { project, store } of projects) {
      const status = await readStatus(store);
      const controls = await readControlsStatus(store);
      const total = status.records.total;
      const sinks = await readSinksStatus(store, project, total, controls.undelivered, configured);
      statuses.push({ project, status: { ...status, controls, sinks } });
    }
    return formatStatuses(statuses, options.json);
  });
  process.stdout.write(text);
}

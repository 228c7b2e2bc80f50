// The daemon's side of controls: after each cycle's sync (and report), the config's controls are
// checked since the last check and the outbox delivered, as `check --notify` does from cron.
import { configFileOf, readConfigText } from "../projects.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { checkProject } from "./check.ts";
import { type ControlsConfig, parseControlsConfig } from "./config.ts";
import { deliverAlerts } from "./deliver.ts";

/** The config file's controls and sinks, or null when there is no file or it lists no control. */
export function daemonControls(configOption: string | undefined): ControlsConfig | null {
  const file = configFileOf(configOption);
  if (file === undefined) return null;
  const config = parseControlsConfig(readConfigText(file), file);
  return config.controls.length > 0 ? config : null;
}

/** One check and delivery; the counts go to the cycle's log line (never a secret). */
export async function checkAndDeliver(
  part: ProjectStore,
  config: ControlsConfig,
): Promise<{ findings: number; open: number; delivered: number; failed: number }> {
  const checked = await checkProject(part, config, null, Date.now());
  const sent = await deliverAlerts(part.store, config.sinks, Date.now());
  return {
    findings: checked.findings.length,
    open: checked.findings.filter((f) => f.waiver === null).length,
    ...sent,
  };
}

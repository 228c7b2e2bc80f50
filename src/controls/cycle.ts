// The daemon's side of controls: after each cycle's sync (and report), the config's controls are
// checked since the last check and the outbox delivered, as `check --notify` does from cron; the SIEM
// sinks get the records they have not acknowledged yet.
import { deliverSinks } from "../export/sinks/deliver.ts";
import { configFileOf, readConfigText } from "../projects.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { checkProject } from "./check.ts";
import { type ControlsConfig, isSiemSink, parseControlsConfig, type Sink } from "./config.ts";
import { deliverAlerts } from "./deliver.ts";

/** The config file's controls and sinks, or null when there is no file or it lists neither a control nor a SIEM sink. */
export function daemonControls(configOption: string | undefined): ControlsConfig | null {
  const file = configFileOf(configOption);
  if (file === undefined) return null;
  const config = parseControlsConfig(readConfigText(file), file);
  return config.controls.length > 0 || config.sinks.some(isSiemSink) ? config : null;
}

/**
 * The outbox's alerts to every sink, and to the SIEM sinks the records after their cursors too (unless
 * `findingsOnly`); a sink that refuses is counted, named in `sinks`, and holds no other back.
 */
export async function deliverOutbox(
  part: ProjectStore,
  sinks: readonly Sink[],
  options: { findingsOnly?: boolean } = {},
) {
  const sent = await deliverAlerts(part.store, sinks, Date.now());
  const siem = sinks.filter(isSiemSink);
  return siem.length === 0 ? sent : { ...sent, sinks: await deliverSinks(part, siem, options) };
}

/** One check and delivery; the counts go to the cycle's log line (never a secret). */
export async function checkAndDeliver(part: ProjectStore, config: ControlsConfig) {
  const checked = config.controls.length > 0 ? await checkProject(part, config, null, Date.now()) : null;
  const sent = await deliverOutbox(part, config.sinks);
  return {
    findings: checked?.findings.length ?? 0,
    open: checked?.findings.filter((f) => f.waiver === null).length ?? 0,
    ...sent,
  };
}

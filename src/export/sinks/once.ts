// `flagtrail export --sink NAME`: one delivery to one SIEM sink of the config, for every project of the
// store (or one), as the daemon does after each cycle; for cron or a first backfill.
import { isSiemSink, parseControlsConfig, type SiemSink } from "../../controls/config.ts";
import { SinkBusyError } from "../../controls/sinkLease.ts";
import { SettingError, SinkError, sinkLabel, UsageError } from "../../errors.ts";
import { configFileOf, readConfigText } from "../../projects.ts";
import type { ProjectStore } from "../../store/projectStores.ts";
import { deliverToSink } from "./deliver.ts";

/** The config's SIEM sink of that name; a UsageError when there is none (a SettingError without a file). */
export function namedSink(configOption: string | undefined, name: string): SiemSink {
  const file = configFileOf(configOption);
  if (file === undefined)
    throw new SettingError(
      "config file",
      "No config file: the sinks are read from flagtrail.config.json, FLAGTRAIL_CONFIG's file or the one given.",
      "config file",
    );
  const sink = parseControlsConfig(readConfigText(file), file).sinks.find((s) => s.name === name);
  if (sink === undefined) throw new UsageError(`${file} has no ${sinkLabel(name)}.`);
  if (!isSiemSink(sink))
    throw new UsageError(
      `${sinkLabel(name)} is a ${sink.kind}: it receives the findings' alerts, not the records.`,
    );
  return sink;
}

/**
 * Delivers what the sink has not acknowledged yet, project by project: the summary sentence, and the
 * projects skipped because another run is delivering to the sink there (it sends what this one would).
 * A refusal in one project (an event the receiver cannot take) holds no other back: the others are sent,
 * then the first refusal is thrown.
 */
export async function sendToSink(
  parts: readonly ProjectStore[],
  sink: SiemSink,
): Promise<{ summary: string; busy: string[] }> {
  const done: string[] = [];
  const busy: string[] = [];
  let refused: SinkError | undefined;
  let events = 0;
  let findings = 0;
  for (const part of parts) {
    try {
      const count = await deliverToSink(part, sink);
      events += count.events;
      findings += count.findings;
      done.push(`project ${part.project}: ${count.events}`);
    } catch (error) {
      if (error instanceof SinkError) {
        refused ??= error;
        continue;
      }
      if (!(error instanceof SinkBusyError)) throw error;
      busy.push(part.project);
      done.push(`project ${part.project}: skipped`);
    }
  }
  if (refused) throw refused;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const summary = `Sent ${plural(events, "event")} and ${plural(findings, "finding")} to ${sinkLabel(sink.name)} (${done.join("; ")}).\n`;
  return { summary, busy };
}

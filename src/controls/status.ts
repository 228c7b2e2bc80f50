// What `status` says about controls: open (unwaived) findings per control, waived ones, the last check,
// and the alerts the outbox still holds undelivered (a sink down, a row that cannot be read).
import { waitingAlerts } from "../store/controls/outbox.ts";
import { readFindingIndex } from "../store/controls/reads.ts";
import { readWaivers } from "../store/controls/waivers.ts";
import type { AnyStore } from "../store/openAny.ts";
import { waiversInForce } from "./waivers.ts";

export interface ControlsStatus {
  /** Unwaived findings per control id (controls without any are absent). */
  open: Record<string, number>;
  waived: number;
  lastCheckAt: string | null;
  /** Per sink, the alerts not delivered yet and the latest error among them (null: not tried yet). */
  undelivered: { sink: string; alerts: number; lastError: string | null }[];
}

export async function readControlsStatus(store: AnyStore, now = Date.now()): Promise<ControlsStatus> {
  const index = await readFindingIndex(store);
  const inForce = waiversInForce(await readWaivers(store), new Date(now).toISOString().slice(0, 10));
  const open: Record<string, number> = {};
  let waived = 0;
  for (const f of index.findings) {
    if (inForce.has(f.id)) waived += 1;
    else open[f.control_id] = (open[f.control_id] ?? 0) + 1;
  }
  const undelivered = (await waitingAlerts(store)).map((w) => ({
    sink: w.sink,
    alerts: Number(w.waiting),
    lastError: w.lastError,
  }));
  return {
    open,
    waived,
    lastCheckAt: index.lastCheckAt === null ? null : new Date(index.lastCheckAt).toISOString(),
    undelivered,
  };
}

/** `Alerts: 3 undelivered (sink "hook" 2, last error: HTTP 503; sink "pager" 1)`, or nothing when none wait. */
function undeliveredText(undelivered: ControlsStatus["undelivered"]): string {
  if (undelivered.length === 0) return "";
  const total = undelivered.reduce((n, u) => n + u.alerts, 0);
  const per = undelivered.map(
    (u) =>
      `sink ${JSON.stringify(u.sink)} ${u.alerts}${u.lastError === null ? "" : `, last error: ${u.lastError}`}`,
  );
  return `Alerts: ${total} undelivered (${per.join("; ")})\n`;
}

/** `Controls: 3 open findings (rr 1, sa 2), 1 waived; last check …`, then the Alerts line when any wait. */
export function controlsStatusText(status: ControlsStatus): string {
  if (status.lastCheckAt === null)
    return `Controls: never checked (flagtrail check)\n${undeliveredText(status.undelivered)}`;
  const entries = Object.entries(status.open);
  const total = entries.reduce((n, [, count]) => n + count, 0);
  const per = entries.map(([control, count]) => `${control} ${count}`).join(", ");
  return (
    `Controls: ${total} open ${total === 1 ? "finding" : "findings"}${total > 0 ? ` (${per})` : ""}, ` +
    `${status.waived} waived; last check ${status.lastCheckAt}\n${undeliveredText(status.undelivered)}`
  );
}

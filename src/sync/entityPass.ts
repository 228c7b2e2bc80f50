// One entity pass of a run: reads up to `concurrency` at once within the budget, each stored in due
// order, and knows which entities caught up (what it leaves is the backlog).
import type { ConsoleApiClient } from "../api/consoleClient.ts";
import { EntityBudget } from "./entityBudget.ts";
import { type DueRead, dueKey } from "./entityDue.ts";
import { fetchEntity } from "./entityReads.ts";
import { EntityWriter } from "./entityStore.ts";
import { type EntitySummary, emptySummary } from "./entitySummary.ts";
import { runPool } from "./pool.ts";
import type { SyncRun } from "./run.ts";

export class EntityPass {
  readonly summary: EntitySummary;
  /** Entities whose read ended ok or 404: no longer due. */
  readonly caughtUp = new Set<string>();
  private readonly budget: EntityBudget;
  private readonly writer: EntityWriter;

  constructor(
    private readonly run: SyncRun,
    client: ConsoleApiClient,
    budget: number | null,
  ) {
    this.summary = emptySummary(budget);
    this.budget = new EntityBudget(client, budget);
    this.writer = new EntityWriter(run, this.summary);
  }

  async readAll(due: readonly DueRead[]): Promise<void> {
    // Reads overlap; writes follow the due order, so entity_seq does not depend on response timing.
    const stored: Promise<void>[] = [];
    const settle: (() => void)[] = [];
    for (let i = 0; i < due.length; i += 1) stored.push(new Promise<void>((resolve) => settle.push(resolve)));
    const read = (indexes: number[], concurrency: number) =>
      runPool(
        indexes,
        concurrency,
        async (i, signal) => {
          try {
            const entity = due[i] as DueRead;
            const result = this.budget.hasRoom()
              ? await fetchEntity(this.run, this.budget.lister, entity, signal)
              : null;
            await stored[i - 1];
            if (result !== null && !signal.aborted) {
              await this.writer.store(entity, result);
              this.caughtUp.add(dueKey(entity));
            }
          } finally {
            settle[i]?.();
          }
        },
        this.run.signal,
      );
    // The first read alone: a key without the entity scope then costs one 403, not one per read in flight.
    const indexes = due.map((_, i) => i);
    await read(indexes.slice(0, 1), 1);
    await read(indexes.slice(1), this.run.options.concurrency);
  }
}

// The entity request budget of a run: every list page an entity read asks for counts against it, and a
// page past it abandons its read (left to a later run through the backlog).
import type { ConsoleApiClient } from "../api/consoleClient.ts";
import type { EntityLister } from "../api/entities.ts";
import { SYNC_DEFAULTS } from "./defaults.ts";
import type { SyncRun } from "./run.ts";

/** A page the budget has no room for: the read it belongs to is left to a later run. */
export class BudgetSpent extends Error {}

/** The budget of this run: as given (null: none); unset, the audit part's requests but at least the floor (none when reading entities alone). */
export function budgetOf(run: SyncRun, auditRequests: number): number | null {
  const { entityBudget, entitiesOnly } = run.options;
  if (entityBudget !== undefined) return entityBudget;
  if (entitiesOnly) return null;
  return Math.max(SYNC_DEFAULTS.entityBudgetFloor, auditRequests);
}

/** Pages asked for against a budget (null: none). */
export class EntityBudget {
  private spent = 0;
  /** The client's list pages, each counted; one past the budget rejects with BudgetSpent. */
  readonly lister: EntityLister;

  constructor(
    client: ConsoleApiClient,
    readonly budget: number | null,
  ) {
    this.lister = {
      listPage: (path, params, signal) => {
        if (!this.hasRoom()) return Promise.reject(new BudgetSpent());
        this.spent += 1;
        return client.listPage(path, params, signal);
      },
    };
  }

  hasRoom(): boolean {
    return this.budget === null || this.spent < this.budget;
  }
}

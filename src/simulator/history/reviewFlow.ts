// How a change reaches production in the simulated team: most go through a review (the author
// requests it, a colleague approves, the author makes the change soon after); some reviews are
// rejected (then re-requested or dropped) or withdrawn; a few are approved by their own author; a few
// changes are hot-fixes made with no review at all (more at night: on-call fixes, labelled EMERGENCY;
// some of them made through the console's API, as the `CONSOLE API` actor). Most changes cite a
// ticket (`FT-123`) in their change log. These are the cases the compliance report's
// review section tells apart (docs/reports.md "What the compliance Markdown contains"): the report counts a change as reviewed when
// an approval of its entity comes just before it, which is what the flow below produces.
import type { NewRecord } from "../auditStore.ts";
import type { Prng } from "../prng.ts";
import type { SimActor } from "../types.ts";

export type Draft = Omit<NewRecord, "id" | "at" | "actor">;

/** A record to append and who makes it. */
export interface Emitted {
  actor: SimActor;
  draft: Draft;
}

/** An entity while a change of it is under review: no other change of it starts meanwhile. */
export interface Reviewable {
  name: string;
  tags: string[];
  busy: boolean;
}

export interface Change {
  kind: "config" | "experiment";
  entity: Reviewable;
  author: SimActor;
  /** Makes the change (updates the state, tells the observer) and returns its record. */
  apply(at: number, actor: SimActor): Draft;
}

/** Shares of changes and reviews; the rest of the changes are requested, approved by someone else, then made. */
const HOTFIX = 0.04;
const SELF_APPROVAL = 0.03;
const REJECTED = 0.06;
const WITHDRAWN = 0.02;
/** A rejected change is requested again (reworked) this often, else dropped. */
const RE_REQUESTED = 0.6;

/** The cases `flagtrail check`'s controls look for: a night change is a hot-fix this often (besides HOTFIX)… */
const NIGHT_HOTFIX = 0.5;
/** …a hot-fix is made through the API this often, and a change cites a ticket this often (a hot-fix less). */
const CONSOLE_API = 0.3;
const TICKETED = 0.85;
const TICKETED_HOTFIX = 0.4;

/** Schedules a step `busyHours` of team activity from now (a Friday-evening request is answered on Monday). */
export type Scheduler = (busyHours: number, step: (at: number) => Emitted) => void;

export class ReviewFlow {
  private readonly reviewers: SimActor[];

  constructor(
    private readonly prng: Prng,
    private readonly ids: Prng,
    actors: readonly SimActor[],
    private readonly schedule: Scheduler,
    /**
     * The controls' cases draw from their own stream, so adding them shifted the history's other
     * choices only where a night change became a hot-fix.
     */
    private readonly marks: Prng,
    private readonly consoleApi: SimActor,
    /** Whether an instant is night in the team's zone. */
    private readonly night: (at: number) => boolean,
  ) {
    // Bots make changes; people review them.
    this.reviewers = actors.filter((a) => !a.email.startsWith("deploy-bot"));
  }

  /** The first record of a change: its review request, or the change itself for a hot-fix. */
  start(change: Change, at: number): Emitted {
    const night = this.night(at);
    if (this.prng.chance(HOTFIX) || (night && this.marks.chance(NIGHT_HOTFIX))) {
      const by = this.marks.chance(CONSOLE_API) ? this.consoleApi : change.author;
      const draft = change.apply(at, by);
      const log = night ? `EMERGENCY hotfix: ${draft.changeLog}` : `Hotfix: ${draft.changeLog}`;
      return { actor: by, draft: this.ticketed({ ...draft, changeLog: log }, TICKETED_HOTFIX) };
    }
    change.entity.busy = true;
    return this.request(change);
  }

  /** The change log with a ticket key at its end, `share` of the time. */
  private ticketed(draft: Draft, share: number): Draft {
    if (!this.marks.chance(share)) return draft;
    return { ...draft, changeLog: `${draft.changeLog} (FT-${this.marks.int(100, 9999)})` };
  }

  /** An exponential delay in busy hours around `mean`, never under `min`. */
  private delay(min: number, mean: number): number {
    return min - mean * Math.log(1 - this.prng.next());
  }

  private request(change: Change): Emitted {
    const reviewId = this.ids.alphanumeric(8);
    this.schedule(this.delay(0.2, 1.5), () => this.resolve(change, reviewId));
    return {
      actor: change.author,
      draft: {
        name: change.entity.name,
        actionType: `${change.kind}_review_create`,
        changeLog: `Requested review ${reviewId}`,
        tags: change.entity.tags,
      },
    };
  }

  private resolve(change: Change, reviewId: string): Emitted {
    const { author, entity, kind } = change;
    const r = this.prng.next();
    const record = (actor: SimActor, actionType: string, changeLog: string): Emitted => ({
      actor,
      draft: { name: entity.name, actionType, changeLog, tags: entity.tags },
    });
    if (r < WITHDRAWN) {
      entity.busy = false;
      return record(author, `${kind}_review_delete`, `Withdrew review ${reviewId}`);
    }
    const others = this.reviewers.filter((a) => a.id !== author.id);
    if (r < WITHDRAWN + REJECTED) {
      if (this.prng.chance(RE_REQUESTED)) this.schedule(this.delay(1, 4), () => this.request(change));
      else entity.busy = false;
      const by = this.prng.pick(others);
      return record(by, `${kind}_review_reject`, `Rejected review ${reviewId} requested by ${author.name}`);
    }
    // A self-approval shows in the log only through updatedBy, as the real one does.
    const by = this.prng.chance(SELF_APPROVAL) ? author : this.prng.pick(others);
    this.schedule(this.delay(0.05, 0.3), (at) => {
      entity.busy = false;
      return { actor: author, draft: this.ticketed(change.apply(at, author), TICKETED) };
    });
    return record(by, `${kind}_review_accept`, `Accepted review ${reviewId} requested by ${author.name}`);
  }
}

// Unique, realistic entity names. The first names handed out are the awkward ones, so that even a
// small history contains a `|`, a backtick and a leading `=`.
import type { Prng } from "../prng.ts";

const AREAS = [
  "checkout",
  "onboarding",
  "search",
  "pricing",
  "feed",
  "profile",
  "billing",
  "cart",
  "signup",
  "ads",
];
const THINGS = [
  "button",
  "banner",
  "flow",
  "ranking",
  "layout",
  "copy",
  "modal",
  "limits",
  "cache",
  "widget",
];
const QUALIFIERS = ["v2", "new", "mobile", "web", "eu", "holdout", "fast", "redesign", "beta", "lite"];

const AWKWARD = {
  dynamic_config: ["pricing|annual_plans", "`legacy`_banner_copy", "=SUM(A1:A9)_limits"],
  gate: ["checkout|express", "`beta` users", "=cmd|' /C calc'!A0"],
  experiment: ["Pricing | annual vs monthly", "Use `fast` ranking", "=1+1 onboarding test"],
} as const;

export type NameKind = keyof typeof AWKWARD;

export class NamePool {
  private readonly used = new Set<string>();
  /** Next suffix to try per base name, so that claiming stays O(1) however many share a base. */
  private readonly suffixes = new Map<string, number>();
  private readonly awkwardLeft: Record<NameKind, string[]> = {
    dynamic_config: [...AWKWARD.dynamic_config],
    gate: [...AWKWARD.gate],
    experiment: [...AWKWARD.experiment],
  };

  constructor(private readonly prng: Prng) {}

  next(kind: NameKind): string {
    const awkward = this.awkwardLeft[kind].shift();
    if (awkward !== undefined) return this.claim(awkward);
    const area = this.prng.pick(AREAS);
    const thing = this.prng.pick(THINGS);
    const qualifier = this.prng.pick(QUALIFIERS);
    const base =
      kind === "experiment"
        ? `${area[0]!.toUpperCase()}${area.slice(1)} ${thing} ${qualifier} test`
        : kind === "gate"
          ? `${area}_${thing}_${qualifier}_gate`
          : `${area}_${thing}_${qualifier}`;
    return this.claim(base);
  }

  private claim(base: string): string {
    let name = base;
    let n = this.suffixes.get(base) ?? 2;
    while (this.used.has(name)) name = `${base}_${n++}`;
    this.suffixes.set(base, n);
    this.used.add(name);
    return name;
  }
}

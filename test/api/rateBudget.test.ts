import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/api/clock.ts";
import { DEFAULT_RATE_LIMITS, RateBudget } from "../../src/api/rateBudget.ts";
import { FakeClock, flush } from "./fakeClock.ts";

describe("RateBudget", () => {
  it("lets the default 100 requests per 10 s through at once, then waits for the oldest to leave", async () => {
    const clock = new FakeClock();
    const budget = new RateBudget({ clock, marginMs: 0 });
    for (let i = 0; i < 100; i += 1) await budget.acquire();
    expect(clock.sleeps).toEqual([]);
    await budget.acquire();
    expect(clock.sleeps).toEqual([10_000]);
    expect(budget.grantedCount).toBe(101);
  });

  it("defaults to 100 per 10 s and 900 per 15 min", () => {
    expect(DEFAULT_RATE_LIMITS).toEqual([
      { limit: 100, windowMs: 10_000 },
      { limit: 900, windowMs: 900_000 },
    ]);
  });

  it("waits for the window that is full, and for the longest of several", async () => {
    const clock = new FakeClock(0);
    const budget = new RateBudget({
      clock,
      marginMs: 0,
      limits: [
        { limit: 2, windowMs: 1_000 },
        { limit: 3, windowMs: 60_000 },
      ],
    });
    await budget.acquire(); // t=0
    await budget.acquire(); // t=0
    expect(budget.waitMs()).toBe(1_000);
    await budget.acquire(); // sleeps 1000 -> t=1000
    expect(clock.now()).toBe(1_000);
    // The long window now holds 3: the next request waits until t=60000, not t=2000.
    expect(budget.waitMs()).toBe(59_000);
    await budget.acquire();
    expect(clock.sleeps).toEqual([1_000, 59_000]);
    expect(clock.now()).toBe(60_000);
  });

  it("never lets more than `limit` requests start in any window (steady stream)", async () => {
    const clock = new FakeClock(0);
    const budget = new RateBudget({ clock, marginMs: 0, limits: [{ limit: 5, windowMs: 1_000 }] });
    const starts: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      await budget.acquire();
      starts.push(clock.now());
    }
    for (let i = 5; i < starts.length; i += 1)
      expect(starts[i]! - starts[i - 5]!).toBeGreaterThanOrEqual(1_000);
    expect(starts.at(-1)).toBe(7_000);
  });

  it("widens each window by the margin", async () => {
    const clock = new FakeClock(0);
    const budget = new RateBudget({ clock, marginMs: 250, limits: [{ limit: 1, windowMs: 1_000 }] });
    await budget.acquire();
    expect(budget.waitMs()).toBe(1_250);
  });

  it("pauses every request after pauseFor, and never shortens a pause", async () => {
    const clock = new FakeClock(0);
    const budget = new RateBudget({ clock, marginMs: 0 });
    budget.pauseFor(5_000);
    budget.pauseFor(2_000);
    expect(budget.waitMs()).toBe(5_000);
    await budget.acquire();
    expect(clock.sleeps).toEqual([5_000]);
    expect(budget.waitMs()).toBe(0);
  });

  it("serves concurrent waiters in order, one timer each, without spinning", async () => {
    const clock = new FakeClock(0, "manual");
    const budget = new RateBudget({ clock, marginMs: 0, limits: [{ limit: 1, windowMs: 1_000 }] });
    const order: number[] = [];
    const all = [1, 2, 3].map((n) => budget.acquire().then(() => order.push(n)));
    await flush();
    expect(order).toEqual([1]);
    expect(clock.pendingSleepers).toBe(1);
    await clock.advance(1_000);
    expect(order).toEqual([1, 2]);
    await clock.advance(1_000);
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3]);
    expect(clock.sleeps).toEqual([1_000, 1_000]);
  });

  it("rejects an aborted waiter without granting it, and the next waiter keeps its place", async () => {
    const clock = new FakeClock(0, "manual");
    const budget = new RateBudget({ clock, marginMs: 0, limits: [{ limit: 1, windowMs: 1_000 }] });
    await budget.acquire();
    const controller = new AbortController();
    const waiting = budget.acquire(controller.signal);
    const behind = budget.acquire();
    let behindDone = false;
    void behind.then(() => {
      behindDone = true;
    });
    await flush();
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await flush();
    expect(behindDone).toBe(false);
    await clock.advance(1_000);
    await behind;
    expect(budget.grantedCount).toBe(2);
  });

  it("refuses an already aborted signal and invalid limits", async () => {
    const budget = new RateBudget({ clock: new FakeClock() });
    await expect(budget.acquire(AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
    expect(budget.grantedCount).toBe(0);
    expect(() => new RateBudget({ limits: [] })).toThrow();
    expect(() => new RateBudget({ limits: [{ limit: 0, windowMs: 10 }] })).toThrow();
  });
});

describe("systemClock.sleep", () => {
  it("rejects with the signal's reason when aborted", async () => {
    const controller = new AbortController();
    const sleeping = systemClock.sleep(60_000, controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(sleeping).rejects.toThrow("cancelled");
  });

  it("resolves after a short delay", async () => {
    await expect(systemClock.sleep(1)).resolves.toBeUndefined();
  });
});

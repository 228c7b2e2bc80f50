// The demo's defaults, in a module of their own: `--help` shows them (the CLI loads its help at every
// start without loading the demo) and the demo's option schema applies them.
export const DEMO_DEFAULTS = {
  db: "./flagtrail-demo.db",
  out: "reports",
  seed: 2026,
  records: 20_000,
  days: 150,
} as const;

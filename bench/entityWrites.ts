// The entity pass's write speed (issue 25: "the entity pass writes ≥ 10,000 versions/s locally"): config
// versions stored by the sync's own storeConfigVersions (hashing, the new-or-changed decision against
// the stored hashes, the entity chain, and since the read's fetch row commits with its versions, the
// config's edit links and field-level version diffs: one transaction per config read) into a fresh file
// store (before that, the links and diffs ran after it and were not counted: 38k/s then), against
// a floor measured in the same run: a bare prepared INSERT of the same rows (values, hashes and chain
// links computed beforehand) into config_versions of an identical store, one transaction per config.
import { chainLink, recordHash } from "../src/hash.ts";
import { sqliteOf } from "../src/store/connection.ts";
import type { VersionInput } from "../src/store/syncStore.ts";
import { storeConfigVersions } from "../src/sync/entityChanges.ts";
import { tempStore } from "./writeRecords.ts";

const CONFIGS = 200;
const VERSIONS = 100;
const ROUNDS = 3;

/** A config version as the console lists it: a handful of rules, a default value, tags. */
function versionOf(config: number, version: number): VersionInput {
  const id = `cfg_${config}`;
  const at = Date.UTC(2024, 0, 1) + (config * VERSIONS + version) * 60_000;
  const raw = {
    id,
    name: `config_${config}`,
    version,
    lastModifiedTime: at,
    lastModifierID: `user_${version % 17}`,
    lastModifierName: `User ${version % 17}`,
    description: `Config ${config}, edit ${version}`,
    isEnabled: version % 5 !== 0,
    defaultValue: {
      limit: version % 50,
      color: ["red", "green", "blue"][version % 3],
      regions: ["eu", "us"],
    },
    rules: Array.from({ length: 3 + (version % 4) }, (_, r) => ({
      id: `rule_${config}_${r}`,
      name: `Rule ${r}`,
      passPercentage: (version * 7 + r) % 101,
      conditions: [{ type: "user_field", targetValue: [`segment_${r}`, `v${version}`], operator: "any" }],
      returnValue: { limit: r * 10 + (version % 10) },
    })),
    tags: [`team_${config % 7}`],
  };
  return {
    configId: id,
    version,
    lastModifiedTime: at,
    lastModifierId: raw.lastModifierID,
    lastModifierName: raw.lastModifierName,
    // Through JSON, as it arrives over HTTP: no object shared with the generator.
    raw: JSON.parse(JSON.stringify(raw)),
  };
}

function configs(): { key: string; versions: VersionInput[] }[] {
  return Array.from({ length: CONFIGS }, (_, c) => ({
    key: `config_${c}`,
    versions: Array.from({ length: VERSIONS }, (_, v) => versionOf(c, v + 1)),
  }));
}

async function storeVersionsPerSecond(reads: ReturnType<typeof configs>): Promise<number> {
  const temp = tempStore("entities");
  try {
    const started = performance.now();
    let inserted = 0;
    for (const read of reads) {
      const result = await storeConfigVersions(temp.store, read.key, read.versions, { runId: null, now: 0 });
      inserted += result.inserted;
    }
    const seconds = (performance.now() - started) / 1000;
    if (inserted !== CONFIGS * VERSIONS) throw new Error(`bench: ${inserted} versions stored`);
    return inserted / seconds;
  } finally {
    temp.done();
  }
}

function bareInsertPerSecond(reads: ReturnType<typeof configs>): number {
  let head = "0".repeat(64);
  let seq = 0;
  const rows = reads.map((read) =>
    read.versions.map((v) => {
      const hash = recordHash(v.raw);
      head = chainLink(head, hash);
      seq += 1;
      const { configId, version, lastModifiedTime, lastModifierId, lastModifierName } = v;
      const raw = JSON.stringify(v.raw);
      return [
        read.key,
        configId,
        version,
        lastModifiedTime,
        lastModifierId,
        lastModifierName,
        raw,
        hash,
        seq,
        head,
      ];
    }),
  );
  const temp = tempStore("entities-bare");
  try {
    const sqlite = sqliteOf(temp.store);
    const insert = sqlite.prepare(
      `INSERT INTO config_versions (config_key, config_id, version, last_modified_time, last_modifier_id,
         last_modifier_name, raw, record_hash, entity_seq, entity_chain_hash, first_seen_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)`,
    );
    const insertRead = sqlite.transaction((read: unknown[][]) => {
      for (const row of read) insert.run(row);
    });
    const started = performance.now();
    for (const read of rows) insertRead.immediate(read);
    return (CONFIGS * VERSIONS) / ((performance.now() - started) / 1000);
  } finally {
    temp.done();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function benchEntityWrites(): Promise<Record<string, number>> {
  const stored: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Fresh inputs per round, so that no round reads objects another one already hashed.
    stored.push(await storeVersionsPerSecond(configs()));
    bare.push(bareInsertPerSecond(configs()));
  }
  const versionsPerSecond = median(stored);
  const barePerSecond = median(bare);
  return {
    entity_versions_stored_per_s: Math.round(versionsPerSecond),
    entity_bare_insert_versions_per_s: Math.round(barePerSecond),
    entity_write_vs_bare_insert_speed_ratio: Number((versionsPerSecond / barePerSecond).toFixed(2)),
  };
}

// How tables.ts describes the tables, and an engine's drizzle builders build them. Kinds carry what differs
// so a value reads back the same on both: text (raw JSON too: its bytes are hashed, which jsonb reorders);
// integer (counts, 0/1 flags); epochMs, bigNumber (past int4: bigint on PostgreSQL, read as a JS number).
import type { SQL } from "drizzle-orm";

export type Kind = "text" | "integer" | "epochMs" | "bigNumber" | "serial" | "blob";
export type Engine = keyof PerEngine;
/** An expression written for each engine (a default, a generated column). */
export interface PerEngine {
  sqlite: SQL;
  pg: SQL;
}

interface ColumnOptions {
  notNull?: true;
  primaryKey?: true;
  default?: string | number | PerEngine;
  /** [table key in TABLES, column key]. */
  references?: readonly [string, string];
  /** A column computed from others: VIRTUAL on SQLite, STORED on PostgreSQL (virtual only from 18 on). */
  generated?: SQL | PerEngine;
  /** Where the engines' columns differ: each engine's own (an engine left out has no such column). */
  variants?: Partial<Record<Engine, Column>>;
}

/** One column, as a small immutable builder: `text().notNull()`. */
export class Column {
  constructor(
    readonly kind: Kind,
    readonly options: ColumnOptions = {},
  ) {}
  private with(options: ColumnOptions): Column {
    return new Column(this.kind, { ...this.options, ...options });
  }
  notNull(): Column {
    return this.with({ notNull: true });
  }
  primaryKey(): Column {
    return this.with({ primaryKey: true });
  }
  default(value: string | number | PerEngine): Column {
    return this.with({ default: value });
  }
  references(table: string, column: string): Column {
    return this.with({ references: [table, column] });
  }
  generatedAs(expression: SQL | PerEngine): Column {
    return this.with({ generated: expression });
  }
  /** This column as `engine` has it; undefined when that engine has no such column. */
  on(engine: Engine): Column | undefined {
    const variants = this.options.variants;
    return variants === undefined ? this : variants[engine];
  }
}

/** A column each engine has in its own way (or only one of them has: the other left out). */
export const perEngine = (variants: Partial<Record<Engine, Column>>) => new Column("text", { variants });

export const text = () => new Column("text");
export const integer = () => new Column("integer");
export const epochMs = () => new Column("epochMs");
export const bigNumber = () => new Column("bigNumber");
export const serial = () => new Column("serial");
export const blob = () => new Column("blob");

/** An index or a composite primary key, over column keys; `engine`: only that engine has it. */
type Constraint = (
  | { kind: "index" | "unique"; name: string; columns: string[] }
  | { kind: "primaryKey"; columns: string[] }
) & { engine?: Engine };

export interface TableSpec<C extends Record<string, Column> = Record<string, Column>> {
  name: string;
  columns: C;
  constraints: Constraint[];
}

export function table<C extends Record<string, Column>>(
  name: string,
  columns: C,
  constraints: (on: {
    index(name: string, ...columns: (keyof C & string)[]): Constraint;
    unique(name: string, ...columns: (keyof C & string)[]): Constraint;
    primaryKey(...columns: (keyof C & string)[]): Constraint;
    only(engine: Engine, constraint: Constraint): Constraint;
  }) => Constraint[] = () => [],
): TableSpec<C> {
  return {
    name,
    columns,
    constraints: constraints({
      index: (index, ...on) => ({ kind: "index", name: index, columns: on }),
      unique: (index, ...on) => ({ kind: "unique", name: index, columns: on }),
      primaryKey: (...on) => ({ kind: "primaryKey", columns: on }),
      only: (engine, constraint) => ({ ...constraint, engine }),
    }),
  };
}

/** `updatedByUserId` → `updated_by_user_id`. */
export function columnName(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** One engine's drizzle builders: each has its own generic type, so schema.ts and pg/schema.ts type the tables. */
export interface Dialect {
  engine: Engine;
  /** The builder of each column kind the engine has (a serial one already its table's numbered primary key). */
  columns: Partial<Record<Kind, (name: string) => unknown>>;
  /** sqliteTable or pgTable (`never[]`: so that drizzle's own types fit). */
  table(
    name: string,
    columns: Record<string, unknown>,
    extras: (t: Record<string, unknown>) => never[],
  ): unknown;
  /** An index builder; its `.on()` is the same on both engines. */
  index(name: string): { on(...columns: unknown[]): unknown };
  uniqueIndex: Dialect["index"];
  primaryKey(config: { columns: unknown[] }): unknown;
}

/** The column builder methods both engines share under the same names. */
interface Builder {
  primaryKey(): Builder;
  notNull(): Builder;
  default(value: unknown): Builder;
  references(target: () => unknown): Builder;
  generatedAlwaysAs(expression: SQL, config?: { mode: "virtual" }): Builder;
}

export function columnsOn(spec: TableSpec, engine: Engine): [string, Column][] {
  return Object.entries(spec.columns).flatMap(([key, column]) => {
    const own = column.on(engine);
    return own === undefined ? [] : [[key, own] as [string, Column]];
  });
}

/** An expression for `engine`: one written for both, or its own of two. */
function expressionOn(expression: SQL | PerEngine, engine: Engine): SQL {
  return "sqlite" in expression && "pg" in expression ? expression[engine] : (expression as SQL);
}

function buildColumn(dialect: Dialect, key: string, spec: Column, built: Record<string, unknown>): unknown {
  const { options } = spec;
  const name = columnName(key);
  const builder = dialect.columns[spec.kind];
  if (!builder)
    throw new Error(`schema: no ${spec.kind} columns on ${dialect.engine} (give ${name} a variant)`);
  let c = builder(name) as Builder;
  if (options.primaryKey) c = c.primaryKey();
  if (options.notNull) c = c.notNull();
  const fallback = options.default;
  if (fallback !== undefined)
    c = c.default(typeof fallback === "object" ? expressionOn(fallback, dialect.engine) : fallback);
  // Virtual on SQLite pinned, not drizzle's default: the one-copy layout of 0011 depends on it.
  if (options.generated)
    c = c.generatedAlwaysAs(
      expressionOn(options.generated, dialect.engine),
      dialect.engine === "sqlite" ? { mode: "virtual" } : undefined,
    );
  const references = options.references;
  if (references) {
    const [tableKey, columnKey] = references;
    const target = (built[tableKey] as Record<string, unknown> | undefined)?.[columnKey];
    if (target === undefined)
      throw new Error(`schema: ${tableKey}.${columnKey} is not defined above ${name}`);
    c = c.references(() => target);
  }
  return c;
}

/** Every table of `tables` built with one engine's drizzle builders, by key. */
export function buildTables<K extends string>(
  tables: Record<K, TableSpec>,
  dialect: Dialect,
): Record<K, unknown> {
  const built: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries<TableSpec>(tables)) {
    const columns: Record<string, unknown> = {};
    for (const [columnKey, c] of columnsOn(spec, dialect.engine)) {
      columns[columnKey] = buildColumn(dialect, columnKey, c, built);
    }
    const constraints = spec.constraints.filter((c) => (c.engine ?? dialect.engine) === dialect.engine);
    built[key] = dialect.table(
      spec.name,
      columns,
      (t) =>
        constraints.map((c) => {
          const on = c.columns.map((columnKey) => t[columnKey]);
          if (c.kind === "primaryKey") return dialect.primaryKey({ columns: on });
          return (c.kind === "unique" ? dialect.uniqueIndex : dialect.index)(c.name).on(...on);
        }) as never[],
    );
  }
  return built as Record<K, unknown>;
}

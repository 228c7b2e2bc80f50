// The part of pg-copy-streams (no types of its own) that src/store/pg/copyRows.ts uses.
declare module "pg-copy-streams" {
  import type { Writable } from "node:stream";
  import type { Submittable } from "pg";

  export interface CopyFromStream extends Writable, Submittable {
    /** Rows the server reports copied, once the stream has finished. */
    rowCount: number;
  }
  export function from(text: string): CopyFromStream;
}

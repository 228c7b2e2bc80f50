import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("sql")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail sql` is not implemented yet.");
    });
}

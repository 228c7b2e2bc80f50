import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("simulate")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail simulate` is not implemented yet.");
    });
}

import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("sync")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail sync` is not implemented yet.");
    });
}

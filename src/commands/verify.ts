import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("verify")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail verify` is not implemented yet.");
    });
}

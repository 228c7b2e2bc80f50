import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("status")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail status` is not implemented yet.");
    });
}

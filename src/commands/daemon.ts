import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("daemon")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail daemon` is not implemented yet.");
    });
}

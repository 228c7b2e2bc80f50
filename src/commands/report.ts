import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("report")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail report` is not implemented yet.");
    });
}

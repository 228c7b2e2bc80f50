import type { Command } from "commander";
import { FlagtrailError } from "../errors.ts";

export function register(program: Command): void {
  program
    .command("demo")
    .description("(not implemented yet)")
    .action(() => {
      throw new FlagtrailError("`flagtrail demo` is not implemented yet.");
    });
}

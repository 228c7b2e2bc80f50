// Every command as commander sees it: name, help text, options, one module per group of commands in
// ./register/ (their shared help style and options in ./register/help.ts). These modules are loaded at every
// start (`flagtrail --version` included), so they import commander and constants only; an action imports
// its command module (./sync.ts, …, with zod, the engine, SQLite) when that command runs.
import type { Command } from "commander";
import { registerCheck, registerUnwaive, registerWaive } from "./register/controls.ts";
import { registerExport } from "./register/export.ts";
import { describeOption } from "./register/help.ts";
import { registerReport, registerSql, registerStatus, registerVerify } from "./register/reads.ts";
import { registerActionTypes, registerDoctor } from "./register/setup.ts";
import { registerDemo, registerSimulate } from "./register/simulator.ts";
import { registerDaemon, registerSync } from "./register/sync.ts";

export function registerCommands(program: Command): void {
  // Set before the commands are added: each copies the program's help settings when created.
  program.configureHelp({ optionDescription: describeOption });
  registerSync(program);
  registerStatus(program);
  registerReport(program);
  registerSql(program);
  registerVerify(program);
  registerCheck(program);
  registerWaive(program);
  registerUnwaive(program);
  registerExport(program);
  registerDaemon(program);
  registerDoctor(program);
  registerActionTypes(program);
  registerDemo(program);
  registerSimulate(program);
}

// A sink's secret, for the alert sinks (webhook) and the SIEM sinks (HEC token, HTTP headers) alike.
import { readFileSync } from "node:fs";
import { SinkError } from "../../errors.ts";

/** A secret from an environment variable or a file; the error says where, never what. */
export function sinkSecret(
  name: string,
  from: { env?: string | undefined; file?: string | undefined },
): string {
  if (from.env !== undefined) {
    const value = process.env[from.env];
    if (!value) throw new SinkError(name, `the environment variable ${from.env} is not set`, false, "clause");
    return value;
  }
  try {
    const value = readFileSync(from.file ?? "", "utf8").trim();
    if (value) return value;
  } catch {
    // Said below without the error's text, which could quote the file.
  }
  throw new SinkError(name, "cannot read a secret from its file", false, "clause");
}

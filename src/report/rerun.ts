// A report re-run for a period whose data has not changed produces the same files but for their
// "generated at" (the Markdown and HTML print it). Such a run keeps the earlier report's generation
// time, so that its files come out byte-identical and nothing needs replacing (issue 26).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeDurable } from "./publish.ts";

const earlierManifestSchema = z.object({ generatedAt: z.string().min(1) });

function readEarlierTime(path: string): string | null {
  try {
    const parsed = earlierManifestSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data.generatedAt : null;
  } catch {
    return null; // none, unreadable or not JSON: nothing to keep
  }
}

/**
 * The earlier report's generation time when every staged file equals the file of the same name in
 * `outDir` once `generatedAt` is read as that time; the staged files are then rewritten with it. Null
 * (and nothing rewritten) when any file is new or differs in anything else.
 */
export function keepEarlierGenerationTime(
  staging: string,
  outDir: string,
  names: { data: readonly string[]; manifest: string },
  generatedAt: string,
): string | null {
  const earlier = readEarlierTime(join(outDir, names.manifest));
  if (earlier === null || earlier === generatedAt) return null;
  const rewrites: { name: string; text: string }[] = [];
  for (const name of names.data) {
    const old = join(outDir, name);
    if (!existsSync(old)) return null;
    const staged = readFileSync(join(staging, name), "utf8");
    if (!staged.includes(generatedAt)) continue; // compared byte for byte by the caller
    const text = staged.split(generatedAt).join(earlier);
    if (text !== readFileSync(old, "utf8")) return null;
    rewrites.push({ name, text });
  }
  for (const { name, text } of rewrites) writeDurable(join(staging, name), text);
  return earlier;
}

// `flagtrail unwaive FINDING_ID --by NAME`: the finding is open again (see ./waive.ts).
import { appendFor } from "./waive.ts";

export async function action(id: string, raw: Record<string, unknown>): Promise<void> {
  const project = await appendFor(raw, id, "unwaive");
  process.stdout.write(`Withdrew the waiver of ${id} (project ${project}).\n`);
}

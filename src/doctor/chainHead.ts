// doctor's "chain head" line: what the next sync's first batch would find, judged by the sync's own check
// (checkBeforeBatch in src/chainChecks.ts) over a read-only snapshot: a break it would refuse (fail), what it
// would warn about (an unsigned head, the previous key left set after its rotation), or how the head is
// signed. The lines name the variables, never a key.
import { checkBeforeBatch, type StateBeforeWrite } from "../chainChecks.ts";
import type { Env } from "../config.ts";
import { checkChainHeadSignature } from "../digests.ts";
import { IntegrityError } from "../errors.ts";
import { previousSigningKeyFromEnv, signingKeyFromEnv } from "../signingKey.ts";
import { readStateBeforeWrite } from "../store/chainRead.ts";
import type { AnyStore } from "../store/openAny.ts";
import type { Check } from "./checks.ts";

export async function chainHeadLine(label: string, store: AnyStore, env: Env): Promise<Check> {
  const name = `chain head${label}`;
  const key = signingKeyFromEnv(env);
  const previous = previousSigningKeyFromEnv(env);
  let state: StateBeforeWrite;
  let warnings: string[];
  try {
    state = await readStateBeforeWrite(store);
    warnings = checkBeforeBatch(state, key, previous);
  } catch (error) {
    if (error instanceof IntegrityError)
      return { name, status: "fail", detail: `the next sync will be refused: ${error.message}` };
    return { name, status: "warn", detail: `not checked: ${error instanceof Error ? error.message : error}` };
  }
  if (!key && previous)
    warnings.push(
      "FLAGTRAIL_SIGNING_KEY_PREVIOUS is set without FLAGTRAIL_SIGNING_KEY: a rotation needs both",
    );
  if (warnings.length > 0) return { name, status: "warn", detail: warnings.join("; ") };
  return { name, status: "ok", detail: signedText(state, key, previous) };
}

/** How the head is signed, once checkBeforeBatch has accepted it. */
function signedText(state: StateBeforeWrite, key: string | undefined, previous: string | undefined): string {
  const { head, headSignature } = state;
  if (head === null) return "no records yet";
  const signed = state.signedHead ?? head;
  if (headSignature === null) return "not signed: FLAGTRAIL_SIGNING_KEY is not set, syncs leave it unsigned";
  const upTo = `signed up to seq ${signed.seq}`;
  if (!key) return `${upTo}; not checked: FLAGTRAIL_SIGNING_KEY is not set`;
  const withKey = checkChainHeadSignature(signed, headSignature, key) ? key : previous;
  const variable = withKey === key ? "FLAGTRAIL_SIGNING_KEY" : "FLAGTRAIL_SIGNING_KEY_PREVIOUS";
  const after =
    withKey !== key
      ? ": the next sync signs it with FLAGTRAIL_SIGNING_KEY (then unset the old key)"
      : signed.seq < head.seq
        ? `; the next sync signs the records after it (to seq ${head.seq}), stored without the key`
        : "";
  return `${upTo} with ${variable}${after}`;
}

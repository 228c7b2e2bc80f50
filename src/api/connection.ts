// What the console API is reached with unless told otherwise, and what a base URL and an auth header may
// be: one rule for the client's options and the CLI's settings (src/config.ts, src/projects.ts).
import { z } from "zod";

export const DEFAULT_BASE_URL = "https://statsigapi.net";
export const DEFAULT_AUTH_HEADER = "STATSIG-API-KEY";
/** An HTTP header name (RFC 9110 token): what an auth header may be called. */
const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A console API base URL: http(s) only, without a trailing slash. */
export const baseUrlSchema = z
  .string()
  .trim()
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === "http:" || url.protocol === "https:";
      } catch {
        return false;
      }
    },
    { message: "the base URL must be an http:// or https:// address" },
  )
  // Paths are joined onto it (/console/v1/…): a trailing slash would double up.
  .transform((value) => value.replace(/\/+$/, ""));

// An HTTP header name is a token (RFC 9110): no spaces, colons or control characters.
export const authHeaderSchema = z
  .string()
  .trim()
  .regex(HTTP_HEADER_NAME, { message: "the auth header must be a valid HTTP header name" });

/** A zod message of these schemas as a sentence of its own. */
export const asSentence = (text: string) =>
  `${text.charAt(0).toUpperCase()}${text.slice(1)}${text.endsWith(".") ? "" : "."}`;

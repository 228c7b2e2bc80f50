// What the console API is reached with unless told otherwise, in one place for the client's options and
// the CLI's settings (src/config.ts), which both validate them.

export const DEFAULT_BASE_URL = "https://statsigapi.net";
export const DEFAULT_AUTH_HEADER = "STATSIG-API-KEY";
/** An HTTP header name (RFC 9110 token): what an auth header may be called. */
export const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

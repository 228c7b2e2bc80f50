// Builds the console client for a sync from resolved settings, so sync, daemon and demo agree.
import type { RetryEvent } from "../api/clientOptions.ts";
import { type ConsoleApiClient, createConsoleClient } from "../api/consoleClient.ts";
import type { ClientTuning, SyncConfig } from "../config.ts";

export function createSyncClient(
  config: Pick<SyncConfig, "baseUrl" | "apiKey" | "authHeader">,
  tuning: ClientTuning = {},
  onRetry?: (event: RetryEvent) => void,
): ConsoleApiClient {
  return createConsoleClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    authHeader: config.authHeader,
    ...tuning,
    ...(onRetry ? { onRetry } : {}),
  });
}

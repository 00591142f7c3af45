/**
 * A sync of an HTTP stream that cannot go on. The message names the URL and what went wrong,
 * never a header value: credentials must not reach logs or a run's error_message.
 */
export class HttpSyncError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'HttpSyncError';
  }
}

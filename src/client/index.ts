/** The typed client for the Messaging API v1: `new MessagingClient({ baseUrl, token })`. */
export { MessagingClient } from './client.js';
export {
  AuthenticationError,
  ConnectionError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  InvalidInputError,
  IpNotAllowedError,
  MessagingApiError,
  MessagingError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  SpendCapExceededError,
  TimeoutError,
  ValidationError,
  type ErrorDetail,
  type ResponseHeaders,
} from './errors.js';
export type { RateLimitState } from './headers.js';
export type {
  LogEntry,
  Logger,
  MessagingClientOptions,
  RequestOptions,
  ResponseMeta,
  SendOptions,
  WithResponse,
} from './options.js';
export { type Page, PagedList, type ToArrayOptions } from './pagination.js';
export type { Deleted, ListParams, StatusListParams } from './resources.js';

/** The Messaging API v1 contract: the single source of truth for every shape and rule msgflow shares. */
export * from './account.js';
export * from './checks.js';
export * from './common.js';
export * from './errors.js';
export * from './events.js';
export * from './otp.js';
export * from './routes.js';
export * from './scopes.js';
export * from './segments.js';
export * from './signature.js';
export * from './sms.js';
export * from './voice.js';
export * from './webhooks.js';

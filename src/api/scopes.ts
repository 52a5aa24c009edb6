/** Token scopes (spec "Authentication"). */
import { z } from 'zod';

export const SCOPES = ['sms:send', 'otp', 'voice', 'lookup', 'email:verify', 'reports', 'balance', 'webhooks'] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

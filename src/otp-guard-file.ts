/**
 * Reads the OTP fraud guard's rules file (YAML, of which JSON is a part) named by MSGFLOW_OTP_GUARD_RULES or by
 * `msgflow otp guard backtest --rules`. Errors name the file and the rule that is wrong.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULT_OTP_GUARD, type OtpGuardConfig, otpGuardConfig } from './api/otp-guard.js';
import { ConfigError, OtpGuardEnv, parseEnv } from './config.js';

export function readOtpGuardRules(file: string): OtpGuardConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`the OTP guard rules file ${file} cannot be read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new ConfigError(`the OTP guard rules file ${file} is not YAML or JSON: ${(error as Error).message}`);
  }
  try {
    return otpGuardConfig(parsed);
  } catch (error) {
    throw new ConfigError(`${file}: ${(error as Error).message}`);
  }
}

/** The rules MSGFLOW_OTP_GUARD_RULES names, the defaults without it, or null when it says `off`. */
export function otpGuardFromEnv(env: NodeJS.ProcessEnv = process.env): OtpGuardConfig | null {
  return otpGuardOf(parseEnv(OtpGuardEnv, env));
}

/** The guard's rules from settings already parsed. */
export function otpGuardOf({ MSGFLOW_OTP_GUARD_RULES }: OtpGuardEnv): OtpGuardConfig | null {
  if (MSGFLOW_OTP_GUARD_RULES === GUARD_OFF) return null;
  return MSGFLOW_OTP_GUARD_RULES ? readOtpGuardRules(MSGFLOW_OTP_GUARD_RULES) : DEFAULT_OTP_GUARD;
}

/** MSGFLOW_OTP_GUARD_RULES=off: no guard and no OTP record (OTP sends go straight to the provider). */
export const GUARD_OFF = 'off';

/** `otp guard report|backtest --help` gives --since's default as a duration, once. */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerOtpGuardCommands } from '../../src/cli/otp-guard.js';

describe('otp guard --since', () => {
  it.each(['report', 'backtest'])('%s --help shows the default as 7d, not in milliseconds', (name) => {
    const otp = new Command('otp');
    registerOtpGuardCommands(otp);
    const command = otp.commands.find((c) => c.name() === 'guard')!.commands.find((c) => c.name() === name)!;
    const help = command.helpInformation();
    expect(help).toMatch(/--since <duration>\s+how far back to read the OTP record \(default: 7d\)/);
    expect(help).not.toContain('604800000');
  });
});

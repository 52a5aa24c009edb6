/** OTP codes as a recipient reads them: the sandbox's inbox of the number. */
import type { SandboxAdmin } from '../../src/sandbox/index.js';

/** The newest code the sandbox delivered to `recipient`; fails naming the recipient when there is none. */
export async function latestOtpCode(admin: Pick<SandboxAdmin, 'inbox'>, recipient: string): Promise<string> {
  const [newest] = await admin.inbox(recipient);
  const code = newest?.text.match(/\b(\d{4,10})\b/)?.[1];
  if (!code) throw new Error(`no code in the inbox of ${recipient}`);
  return code;
}

/** A code of the same length that is not `code`. */
export const wrongOtpCode = (code: string): string =>
  String((Number(code) + 1) % 10 ** code.length).padStart(code.length, '0');

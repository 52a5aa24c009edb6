// The light entry points compile without the optional peers installed (never run).
import { connectClient, Msgflow, type OtpSendInput, type SendSmsResult } from 'msgflow';
import { MessagingClient, type MessagingClientOptions } from 'msgflow/client';

export const options: MessagingClientOptions = { baseUrl: 'https://api.example.com/v1', token: 'tok_example' };
export const client = new MessagingClient(options);
export const otp: OtpSendInput = { purpose: 'login', recipient: '12025550100' };

export async function send(): Promise<SendSmsResult> {
  const msgflow = new Msgflow(await connectClient());
  const started = await msgflow.sendSms({ sender: 'ACME', recipients: ['12025550100'], message: 'Hello' });
  return started.result();
}

// The light entry points compile without the optional peers installed (never run).
import {
  CampaignReports,
  connectClient,
  type MessageStore,
  Msgflow,
  openMessageStore,
  type OtpSendInput,
  type ReportRow,
  type SendSmsResult,
  type SettledRow,
  storeOptionsFromEnv,
} from 'msgflow';
import { MessagingClient, type MessagingClientOptions } from 'msgflow/client';

export const options: MessagingClientOptions = { baseUrl: 'https://api.example.com/v1', token: 'tok_example' };
export const client = new MessagingClient(options);
export const otp: OtpSendInput = { purpose: 'login', recipient: '12025550100' };

export async function send(): Promise<SendSmsResult> {
  const msgflow = new Msgflow(await connectClient());
  const started = await msgflow.sendSms({ sender: 'ACME', recipients: ['12025550100'], message: 'Hello' });
  return started.result();
}

export async function delivered(campaignKey: string): Promise<string[]> {
  const store: MessageStore = await openMessageStore(storeOptionsFromEnv());
  try {
    const numbers: string[] = [];
    for await (const row of new CampaignReports(store).rows(campaignKey, { status: 'delivered' }))
      numbers.push((row satisfies ReportRow).number ?? '');
    return numbers;
  } finally {
    await store.close();
  }
}

export async function firstOutcome(msgflow: Msgflow, campaignKey: string): Promise<SettledRow | undefined> {
  for await (const row of msgflow.reports.outcomes(campaignKey)) return row;
  return undefined;
}

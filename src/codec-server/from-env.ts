/** The codec endpoint wired from the environment: MSGFLOW_ENCRYPTION_KEY and the MSGFLOW_CODEC_* variables. */
import { CodecEnv, ConfigError, parseEnv } from '../config.js';
import type { Logger } from '../log.js';
import { EncryptionCodec } from '../temporal/codec.js';
import { keyRingFromEnv } from '../temporal/data-converter.js';
import { type RunningCodecServer, startCodecServer } from './server.js';

export async function startCodecServerFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Promise<RunningCodecServer> {
  const config = parseEnv(CodecEnv, env);
  const ring = keyRingFromEnv(env);
  if (!ring) throw new ConfigError('MSGFLOW_ENCRYPTION_KEY is required: the key ring the codec endpoint decrypts with');
  if (!config.MSGFLOW_CODEC_TOKEN) {
    throw new ConfigError(
      'MSGFLOW_CODEC_TOKEN is required: the bearer token operators present (generate one with `msgflow codec token`)',
    );
  }
  return startCodecServer({
    host: config.MSGFLOW_CODEC_HOST,
    port: config.MSGFLOW_CODEC_PORT,
    codec: new EncryptionCodec(ring),
    tokens: config.MSGFLOW_CODEC_TOKEN,
    allowedOrigins: config.MSGFLOW_CODEC_CORS_ORIGINS,
    logger,
  });
}

/** Payloads between proto3 JSON (the codec protocol's wire form) and the SDK's Payload objects. */
import type { Payload } from '@temporalio/common';
// A CommonJS module whose named exports Node's ESM loader cannot detect: take them off the default export.
import proto from '@temporalio/proto';
import type { JsonPayload } from '../api/codec-io.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

export function fromJsonPayload(json: JsonPayload): Payload {
  return ProtoPayload.fromObject(json);
}

export function toJsonPayload(payload: Payload): JsonPayload {
  // `bytes: String` renders bytes as base64; empty repeated fields are left out, as proto3 JSON does.
  return ProtoPayload.toObject(ProtoPayload.fromObject(payload), { bytes: String }) as JsonPayload;
}

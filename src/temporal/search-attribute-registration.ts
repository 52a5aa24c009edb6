/** Registering msgflow's search attributes on a real cluster (the dev server gets them as start flags). */
import type { Connection } from '@temporalio/client';
// A CommonJS module whose named exports Node's ESM loader cannot detect: take them off the default export.
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../definitions/search-attributes.js';
import { GRPC_STATUS, grpcCodeOf } from './grpc.js';

type IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;
const { IndexedValueType } = proto.temporal.api.enums.v1;
const INDEXED_TYPES: Record<'Keyword', IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
};

/**
 * Adds whichever of msgflow's search attributes `namespace` lacks. Safe to run any number of times and
 * concurrently; fails clearly if a name is already registered with another type.
 */
export async function registerSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const custom = existing.customAttributes ?? {};
  const missing: Record<string, IndexedValueType> = {};
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_DEFINITIONS)) {
    const want = INDEXED_TYPES[type];
    const have = custom[name];
    if (have === undefined || have === null) missing[name] = want;
    else if (have !== want) {
      throw new Error(
        `Search attribute ${name} exists in namespace ${namespace} as ${IndexedValueType[have]}, msgflow needs ${type}`,
      );
    }
  }
  if (Object.keys(missing).length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (error) {
    // Another process registered them between our list and add: the goal is reached.
    if (grpcCodeOf(error) !== GRPC_STATUS.alreadyExists) throw error;
  }
}

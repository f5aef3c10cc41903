import { createRequire } from 'node:module';
import type { History } from '@temporalio/common/lib/proto-utils.js';

/**
 * Proto3 JSON <-> History, in the format of `temporal workflow show -o json` and the SDK's
 * historyToJSON.
 *
 * Why not historyFromJSON/historyToJSON from @temporalio/common: SDK 1.24 uses protobufjs 8
 * while @grpc/proto-loader keeps protobufjs 7 at the top of node_modules, so npm gives
 * @temporalio/common and @temporalio/proto separate protobufjs copies, and protojson's
 * `instanceof Type` check fails ("type must be a Type"). That also breaks passing JSON straight
 * to Worker.runReplayHistory. Here protojson is loaded from the copy @temporalio/proto itself
 * resolves, which is the copy its types were built with, whatever npm's layout.
 */
type Protojson = {
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toJson(type: unknown, message: unknown): unknown;
};

const require = createRequire(import.meta.url);
const protoRequire = createRequire(require.resolve('@temporalio/proto/package.json'));
const protojson = protoRequire('protobufjs/ext/protojson') as Protojson;
const proto = require('@temporalio/proto') as unknown;
const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as { patchProtobufRoot(root: unknown): { lookupType(name: string): unknown } };
const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');

/** A History message (int64 as Long) from its proto3 JSON, ready for Worker.runReplayHistories. */
export function historyFromJson(json: unknown): History {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { events?: unknown }).events)) {
    throw new TypeError('not a history: expected an object with an events array');
  }
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}

/** The proto3 JSON text of a History, as `temporal workflow show -o json` writes it. */
export function historyToJson(history: History): string {
  const message = (historyType as { fromObject(o: unknown): unknown }).fromObject(history);
  return JSON.stringify(protojson.toJson(historyType, message), null, 2);
}

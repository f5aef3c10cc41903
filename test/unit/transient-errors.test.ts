import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { ServiceError } from '@temporalio/client';
import { MongoError, MongoErrorLabel, MongoNetworkError, MongoServerError } from 'mongodb';
import { isTransientDependencyError } from '../../src/http/transient-errors.js';

const grpcError = (code: number) => Object.assign(new Error(`grpc ${code}`), { code, details: `grpc ${code}`, metadata: {} });
const serverError = (code: number, message = `code ${code}`) => new MongoServerError({ message, errmsg: message, code });

describe('transient dependency errors (503 with Retry-After, not 500)', function () {
  it('Temporal away, too slow or shedding load', function () {
    for (const code of [14, 4, 8]) assert.equal(isTransientDependencyError(new ServiceError('start failed', { cause: grpcError(code) })), true, `grpc ${code}`);
    for (const code of [3, 5, 6, 7, 13]) assert.equal(isTransientDependencyError(new ServiceError('start failed', { cause: grpcError(code) })), false, `grpc ${code}`);
  });

  it('the store unreachable, busy, or failing over to a new primary', function () {
    assert.equal(isTransientDependencyError(new MongoNetworkError('connection reset')), true);
    for (const code of [10107, 189, 91, 11600, 11602, 13435]) assert.equal(isTransientDependencyError(serverError(code)), true, `code ${code}`);
    assert.equal(isTransientDependencyError(serverError(1, 'SQLITE_BUSY: database is locked')), true);
    const labelled = new MongoError('pool cleared');
    labelled.addErrorLabel(MongoErrorLabel.RetryableWriteError);
    assert.equal(isTransientDependencyError(labelled), true);
  });

  it('a connection the store ended mid-request (the raw socket error a waiting write rethrows)', async function () {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const writeError = await new Promise<Error>((resolve) => {
        const client = connect(port, '127.0.0.1');
        client.on('error', () => undefined);
        // Node turns a write after the peer's FIN (once the 'end' event has run) into EPIPE.
        client.once('end', () => setImmediate(() => client.write('ping', (err) => resolve(err ?? new Error('the write succeeded')))));
      });
      assert.match(writeError.message, /ended by the other party/);
      assert.equal(isTransientDependencyError(writeError), true);
      assert.equal(isTransientDependencyError(new Error('command failed', { cause: writeError })), true, 'wrapped once');
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { code: 'ECONNREFUSED' });
      assert.equal(isTransientDependencyError(refused), true);
    } finally {
      server.close();
    }
  });

  it('not a refusal of the request itself, nor our own bug', function () {
    assert.equal(isTransientDependencyError(serverError(11000, 'E11000 duplicate key')), false);
    assert.equal(isTransientDependencyError(serverError(2, 'bad value')), false);
    assert.equal(isTransientDependencyError(new TypeError('x is undefined')), false);
    assert.equal(isTransientDependencyError(undefined), false);
    assert.equal(isTransientDependencyError(Object.assign(new Error('no such file'), { code: 'ENOENT' })), false);
    const looped: Error = new Error('a');
    looped.cause = looped;
    assert.equal(isTransientDependencyError(looped), false);
  });
});

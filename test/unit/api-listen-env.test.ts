import assert from 'node:assert/strict';
import { loadEnv } from '../../src/config/env.js';
import { inheritedFdList } from '../../tools/stack/api-listener.js';

describe('the API listening settings', () => {
  it('reads inherited descriptors as a list, and refuses stdio or garbage', () => {
    assert.deepEqual(loadEnv({ API_LISTEN_FDS: '3,4, 5' }).API_LISTEN_FDS, [3, 4, 5]);
    assert.equal(loadEnv({}).API_LISTEN_FDS, undefined);
    assert.equal(loadEnv({ API_LISTEN_FDS: ' ' }).API_LISTEN_FDS, undefined);
    assert.throws(() => loadEnv({ API_LISTEN_FDS: '2,3' }), /API_LISTEN_FDS/);
    assert.throws(() => loadEnv({ API_LISTEN_FDS: '3,x' }), /API_LISTEN_FDS/);
  });

  it('defaults to 64 accepting handles and a backlog of 4096', () => {
    const env = loadEnv({});
    assert.equal(env.API_ACCEPT_HANDLES, 64);
    assert.equal(env.API_LISTEN_BACKLOG, 4096);
  });

  it('numbers the child descriptors from 3 in spawn order', () => {
    assert.equal(inheritedFdList(3), '3,4,5');
    assert.equal(inheritedFdList(1), '3');
  });
});

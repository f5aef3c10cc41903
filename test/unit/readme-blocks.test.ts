import assert from 'node:assert/strict';
import { shellBlocks, substitute } from '../support/readme-blocks.js';

const doc = ['# T', '## A', '```sh', 'echo a1', '```', 'text', '```ts', 'x()', '```', '```sh', 'echo a2', '```', '## B', '```sh', 'echo b', '```', ''].join('\n');

describe('README shell blocks', function () {
  it('takes the ```sh blocks of one section only, in order', function () {
    assert.deepEqual(shellBlocks(doc, 'A'), ['echo a1\n', 'echo a2\n']);
    assert.deepEqual(shellBlocks(doc, 'B'), ['echo b\n']);
    assert.throws(() => shellBlocks(doc, 'C'), /no "## C" section/);
  });

  it('substitutes every occurrence, and refuses a mapping that matches nothing', function () {
    assert.deepEqual(substitute(['curl :8402/a :8402/b\n'], [[':8402', ':9000']]), ['curl :9000/a :9000/b\n']);
    assert.throws(() => substitute(['echo\n'], [[':8402', ':9000']]), /update the mapping/);
  });
});

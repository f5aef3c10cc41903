import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAbiItem, toEventSelector, toEventSignature, toFunctionSelector, toFunctionSignature, type AbiEvent, type AbiFunction } from 'viem';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { projectRoot } from '../../src/config/paths.js';

/** The signatures docs/api.md gives a reconciler: each line of the solidity block in its settlement-contract section. */
function documentedSignatures(): { item: AbiEvent | AbiFunction; selector: string; line: string }[] {
  const doc = readFileSync(join(projectRoot(), 'docs', 'api.md'), 'utf8');
  const section = doc.split('\n## ').find((s) => s.startsWith('Reading the settlement contract'));
  assert.ok(section, 'docs/api.md has a "Reading the settlement contract" section');
  const block = /```solidity\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'with a solidity block of signatures');
  return block
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [signature, comment = ''] = line.split('//');
      const selector = /(?:topic0|selector) (0x[0-9a-f]+)/.exec(comment)?.[1];
      assert.ok(selector, `${line}: names its topic0 or selector`);
      return { item: parseAbiItem(signature!.trim()) as AbiEvent | AbiFunction, selector, line };
    });
}

describe('docs/api.md: the settlement contract signatures a reconciler needs match the ABI', function () {
  const documented = documentedSignatures();

  it('documents debtOf, refundedOf, PaymentSettled, Refunded and BatchSettled', function () {
    const names = documented.map((d) => `${d.item.type} ${d.item.name}`);
    for (const name of ['function debtOf', 'function refundedOf', 'event PaymentSettled', 'event Refunded', 'event BatchSettled']) assert.ok(names.includes(name), name);
  });

  it('each documented signature, indexed field, parameter name and selector is the ABI\'s', function () {
    for (const { item, selector, line } of documented) {
      const abi = creditSettlementAbi.find((a) => a.type === item.type && 'name' in a && a.name === item.name) as AbiEvent | AbiFunction | undefined;
      assert.ok(abi, `${line}: in src/chain/abi.ts`);
      if (item.type === 'event') {
        const ev = abi as AbiEvent;
        assert.equal(toEventSignature(item), toEventSignature(ev), line);
        assert.equal(selector, toEventSelector(ev), `${line}: topic0`);
        // Names and indexed flags decide how a log decodes (topics vs data), so they must match too.
        assert.deepEqual(item.inputs.map((i) => [i.type, i.name, i.indexed === true]), ev.inputs.map((i) => [i.type, i.name, i.indexed === true]), line);
      } else {
        const fn = abi as AbiFunction;
        assert.equal(toFunctionSignature(item), toFunctionSignature(fn), line);
        assert.equal(selector, toFunctionSelector(fn), `${line}: selector`);
        assert.deepEqual(item.outputs.map((o) => o.type), fn.outputs.map((o) => o.type), `${line}: returns`);
        assert.equal(item.stateMutability, fn.stateMutability, line);
      }
    }
  });
});

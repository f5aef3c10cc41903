import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { projectRoot } from '../config/paths.js';
import type { Artifact, ContractName } from './compile.js';

export { creditSettlementAbi, testUsdcAbi } from './abi.js';
export type { Artifact, ContractName } from './compile.js';

const cache = new Map<ContractName, Artifact>();

/** The committed build artifact (contracts/build/<name>.json). ABIs with full types come from ./abi.js. */
export function loadArtifact(name: ContractName): Artifact {
  let artifact = cache.get(name);
  if (!artifact) {
    artifact = JSON.parse(readFileSync(join(projectRoot(), 'contracts', 'build', `${name}.json`), 'utf8')) as Artifact;
    if (artifact.contractName !== name || !/^0x[0-9a-f]+$/.test(artifact.bytecode)) {
      throw new Error(`contracts/build/${name}.json is not a valid artifact; run node dist/src/chain/compile.js`);
    }
    cache.set(name, artifact);
  }
  return artifact;
}

export function creationBytecode(name: ContractName): Hex {
  return loadArtifact(name).bytecode;
}

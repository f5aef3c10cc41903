import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, totalmem, release, type as osType } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  loadAverage: string;
  date: string;
}

function debianVersion(): string {
  try {
    return execFileSync('cat', ['/etc/debian_version'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  const debian = debianVersion();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${osType()} ${release()}${debian ? ` (Debian ${debian})` : ''}`,
    node: process.version,
    loadAverage: loadavg().map((l) => l.toFixed(2)).join(' '),
    date: new Date().toISOString(),
  };
}

export function describeMachine(m: MachineInfo): string {
  return `${m.cores} x ${m.cpuModel}, ${m.memoryGiB} GiB RAM (${Math.round(freemem() / 2 ** 30)} GiB free), ${m.os}, Node ${m.node}, load average ${m.loadAverage} at start`;
}

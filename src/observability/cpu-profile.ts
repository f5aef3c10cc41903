import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * `node --cpu-prof` for processes the stack spawns (NODE_OPTIONS may not carry it): with
 * CPU_PROFILE_DIR set, the process profiles itself from start to exit and writes
 * `<service>-<pid>.cpuprofile` there (open it in Chrome DevTools or speedscope). Off by default.
 */
export function profileCpuIfAsked(service: string, dir = process.env.CPU_PROFILE_DIR): void {
  if (!dir) return;
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // An in-thread inspector session answers synchronously, so the profile can be written on exit.
  process.once('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${service}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}

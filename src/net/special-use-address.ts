import { BlockList, isIP } from 'node:net';

/**
 * Addresses an outbound request on a caller's behalf must never reach (SSRF): loopback, private,
 * shared, link-local, documentation, benchmarking, multicast and reserved ranges (IANA
 * special-purpose registries), plus the IPv6 forms that tunnel or translate to IPv4 ones.
 */
const SPECIAL_USE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_USE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23],
  ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) SPECIAL_USE.addSubnet(net, prefix, 'ipv6');

// IPv4-mapped IPv6 (::ffff:a.b.c.d) is refused outright. It has a list of its own because
// BlockList compares IPv4 addresses in their mapped form: a ::ffff:0:0/96 rule would match every one.
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function family(ip: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(ip);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

/** True only for an IP address outside every special-use range (so not for a host name). */
export function isPublicAddress(ip: string): boolean {
  const f = family(ip);
  return f !== null && !SPECIAL_USE.check(ip, f) && !(f === 'ipv6' && IPV4_MAPPED.check(ip, 'ipv6'));
}

export function isLoopbackAddress(ip: string): boolean {
  const f = family(ip);
  return f !== null && LOOPBACK.check(ip, f);
}

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
  ['::', 128], ['::1', 128], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) SPECIAL_USE.addSubnet(net, prefix, 'ipv6');

/**
 * IPv6 prefixes that carry an IPv4 address, refused whole whatever that address is: a socket to one
 * ends at (or is translated to) the embedded IPv4 address, which the IPv4 rules above would have to
 * judge, and none of these forms is a sane address for an endpoint we call. A list of its own, checked
 * for IPv6 only, because BlockList compares IPv4 addresses in their mapped form: a ::ffff:0:0/96 rule
 * would match every IPv4 address.
 */
const IPV4_EMBEDDING = new BlockList();
for (const [net, prefix] of [
  ['::ffff:0:0', 96], // IPv4-mapped (RFC 4291)
  ['::', 96], // IPv4-compatible, deprecated (RFC 4291): [::127.0.0.1] is ::7f00:1
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 2765, SIIT)
  ['64:ff9b::', 96], // NAT64 well-known prefix (RFC 6052)
  ['64:ff9b:1::', 48], // NAT64 local use (RFC 8215): the operator chooses where the IPv4 sits
  ['2002::', 16], // 6to4 (RFC 3056): the IPv4 in bits 16-48
  ['2001::', 32], // Teredo (RFC 4380): server and (obfuscated) client IPv4 inside
] as const) IPV4_EMBEDDING.addSubnet(net, prefix, 'ipv6');

/** :: and ::1 sit inside the IPv4-compatible ::/96 but are IPv6's own unspecified and loopback addresses. */
const UNSPECIFIED_OR_LOOPBACK_V6 = new BlockList();
UNSPECIFIED_OR_LOOPBACK_V6.addSubnet('::', 127, 'ipv6');

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
  return f !== null && !SPECIAL_USE.check(ip, f) && !embedsIpv4(ip);
}

/**
 * True for an IPv6 address in a prefix that carries an IPv4 address (mapped, compatible, translated,
 * NAT64, 6to4, Teredo), whatever that address is.
 */
export function embedsIpv4(ip: string): boolean {
  return family(ip) === 'ipv6' && IPV4_EMBEDDING.check(ip, 'ipv6') && !UNSPECIFIED_OR_LOOPBACK_V6.check(ip, 'ipv6');
}

/** 127.0.0.0/8 and ::1 only: BlockList would also match 127.x in a mapped form ([::ffff:7f00:1]), which no allowance covers. */
export function isLoopbackAddress(ip: string): boolean {
  const f = family(ip);
  return f !== null && !embedsIpv4(ip) && LOOPBACK.check(ip, f);
}

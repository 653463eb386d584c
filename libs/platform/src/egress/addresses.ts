import { BlockList, isIP } from 'node:net';

/** IPv4 ranges that are not the public unicast internet (RFC 6890 and its updates). */
const PRIVATE_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata at 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

/**
 * Public IPv6 unicast is 2000::/3 only, so everything outside it is refused (loopback, unspecified,
 * IPv4-compatible ::/96, unique-local, link-local, multicast), plus the non-public parts inside it.
 * IPv4-mapped, NAT64 and 6to4 addresses are judged by their IPv4 before this list is asked.
 */
const PRIVATE_V6: Array<[string, number]> = [
  ['::', 3],
  ['4000::', 2],
  ['8000::', 1],
  ['2001::', 32], // Teredo: carries an obfuscated IPv4
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
];

// Two lists: a BlockList also matches an IPv4 address against its IPv6 rules (as ::ffff:a.b.c.d, inside ::/3).
const BLOCKED_V4 = new BlockList();
for (const [network, prefix] of PRIVATE_V4) BLOCKED_V4.addSubnet(network, prefix, 'ipv4');
const BLOCKED_V6 = new BlockList();
for (const [network, prefix] of PRIVATE_V6) BLOCKED_V6.addSubnet(network, prefix, 'ipv6');

/** True for any address outside the public unicast internet. Accepts IPv4 and IPv6 text; a host name is not an address (false). */
export function isPrivateAddress(address: string): boolean {
  const text = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  switch (isIP(text)) {
    case 4:
      return BLOCKED_V4.check(text, 'ipv4');
    case 6: {
      const embedded = embeddedIpv4(ipv6Groups(text));
      return embedded ? BLOCKED_V4.check(embedded, 'ipv4') : BLOCKED_V6.check(text, 'ipv6');
    }
    default:
      return false;
  }
}

/** The 8 16-bit groups of a valid IPv6 text; WHATWG URL's serializer turns any spelling (dotted tail included) into plain hex groups. */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}

/** The IPv4 that an IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address reaches. */
function embeddedIpv4(groups: number[]): string | undefined {
  const quad = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return quad(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return quad(groups[6], groups[7]);
  if (groups[0] === 0x2002) return quad(groups[1], groups[2]);
  return undefined;
}

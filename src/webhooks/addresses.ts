// Where an endpoint may not point when private addresses are refused (always in live): any
// address that is not a public unicast one (RFC 6890's special-purpose registries): loopback,
// private, shared (CGNAT), link-local, unique-local, benchmarking, documentation, multicast,
// broadcast, reserved, "this network", and every IPv6 form that carries such an IPv4 address
// (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4, Teredo). The check runs when an
// endpoint is registered and again on every connection, on the address the connection uses:
// an IP literal as the URL parser wrote it, or what the name resolves to at that moment
// (`publicOnlyLookup`), since a name can resolve elsewhere later.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { isIP } from 'node:net';

/** IPv4 ranges that are not public unicast: [first octets as a 32-bit number, prefix length]. */
const IPV4_REFUSED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

function ipv4Number(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

const IPV4_REFUSED_RANGES = IPV4_REFUSED.map(([base, bits]) => ({ base: ipv4Number(base), size: 2 ** (32 - bits) }));

function isRefusedIpv4(value: number): boolean {
  return IPV4_REFUSED_RANGES.some(({ base, size }) => value >= base && value < base + size);
}

/** The eight 16-bit groups of an IPv6 address in any textual form (with ::, a dotted IPv4 tail, a zone); null if it is none. */
function ipv6Groups(text: string): number[] | null {
  let address = text.replace(/^\[|\]$/g, '');
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  if (isIP(address) !== 6) return null;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const v4 = ipv4Number(dotted[1]);
    address = `${address.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = address.includes('::') ? address.split('::') : [address, null];
  const part = (s: string | null) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const first = part(head);
  const last = part(tail);
  const groups = tail === null ? first : [...first, ...new Array(8 - first.length - last.length).fill(0), ...last];
  return groups.length === 8 ? groups : null;
}

const embeddedIpv4 = (high: number, low: number): number => high * 65536 + low;

function isRefusedIpv6(g: number[]): boolean {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::/96: unspecified, loopback and the IPv4-compatible forms; none is a public address.
  if (zeros(0, 6)) return true;
  // ::ffff:0:0/96 IPv4-mapped and ::ffff:0:0:0/96 IPv4-translated: the IPv4 address decides.
  if (zeros(0, 5) && g[5] === 0xffff) return isRefusedIpv4(embeddedIpv4(g[6], g[7]));
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return isRefusedIpv4(embeddedIpv4(g[6], g[7]));
  // 64:ff9b::/96 NAT64: the gateway connects to the IPv4 address it carries.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return isRefusedIpv4(embeddedIpv4(g[6], g[7]));
  // 64:ff9b:1::/48 local-use NAT64 reaches whatever the operator's network translates to.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true;
  // 6to4 2002::/16 carries an IPv4 address in its next 32 bits.
  if (g[0] === 0x2002) return isRefusedIpv4(embeddedIpv4(g[1], g[2]));
  // 2001::/23 IETF protocol assignments (Teredo 2001::/32 among them), 2001:db8::/32 documentation.
  if (g[0] === 0x2001 && (g[1] < 0x200 || g[1] === 0xdb8)) return true;
  // 100::/64 discard-only.
  if (g[0] === 0x100 && zeros(1, 4)) return true;
  // fc00::/7 unique-local; fe80::/10 link-local and fec0::/10 old site-local (fe80::/9); ff00::/8 multicast.
  if ((g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xff80) === 0xfe80 || (g[0] & 0xff00) === 0xff00) return true;
  return false;
}

/**
 * Whether `address` (an IP address in any form Node's resolver or the URL parser gives, with or
 * without brackets) is one an endpoint may not reach when private addresses are refused. Text
 * that is no IP address is refused too: the caller checks addresses, not names.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return isRefusedIpv4(ipv4Number(bare));
  const groups = ipv6Groups(bare);
  return groups === null || isRefusedIpv6(groups);
}

/** The host of a URL as the connection will use it: an IP literal without brackets, or a name. */
export function connectionHost(url: URL): { host: string; literal: boolean } {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { host, literal: isIP(host) !== 0 };
}

/**
 * Why an endpoint's URL may not be registered where private addresses are refused: its IP
 * literal, or an address its name resolves to now, is private; or the name resolves to nothing.
 * Null when every address it resolves to is public.
 */
export async function refusedDestination(url: URL): Promise<'private_address' | 'unresolvable' | null> {
  const { host, literal } = connectionHost(url);
  if (literal) return isPrivateAddress(host) ? 'private_address' : null;
  const addresses = await dnsLookupAll(host, { all: true, verbatim: true }).then((found) => found.map((a) => a.address), () => []);
  if (addresses.length === 0) return 'unresolvable';
  return addresses.some(isPrivateAddress) ? 'private_address' : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses names resolving to a private address (any of them). */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const found = addresses as LookupAddress[];
    const refused = found.find((a) => isPrivateAddress(a.address));
    if (refused) return callback(Object.assign(new Error(`${hostname} resolves to the private address ${refused.address}`), { code: 'EPRIVATEADDRESS' }), []);
    if (found.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), []);
    if (options.all) return callback(null, found);
    callback(null, found[0].address, found[0].family);
  });
}

// Where a webhook endpoint may not point when private addresses are refused (always in live):
// every textual form of a non-public address, taken as the connection takes it, i.e. after the
// URL parser rewrote it (decimal, octal and hex IPv4, IPv4-mapped IPv6 in both notations), then
// checked on its bytes. Names are checked on what they resolve to (src/webhooks/addresses.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { SECRET_NAMES } from '../../src/secrets';
import { checkUrl } from '../../src/webhooks/routes';
import { DomainError } from '../../src/domain-error';
import { connectionHost, isPrivateAddress, refusedDestination } from '../../src/webhooks/addresses';

/** The URL's host as a connection uses it, refused or not. */
const refused = (url: string): boolean => isPrivateAddress(connectionHost(new URL(url)).host);

describe('webhook endpoint addresses', () => {
  const refusedForms: Array<[why: string, url: string]> = [
    ['IPv4 loopback', 'https://127.0.0.1/'],
    ['IPv4 loopback, elsewhere in 127/8', 'https://127.255.0.9/'],
    ['IPv4 loopback, short form', 'https://127.1/'],
    ['IPv4 loopback, decimal', 'https://2130706433/'],
    ['IPv4 loopback, octal', 'https://017700000001/'],
    ['IPv4 loopback, dotted octal', 'https://0177.0.0.01/'],
    ['IPv4 loopback, hex', 'https://0x7f000001/'],
    ['IPv4 loopback, dotted hex', 'https://0x7f.0x0.0x0.0x1/'],
    ['"this network" 0.0.0.0', 'https://0.0.0.0/'],
    ['"this network" as 0', 'https://0/'],
    ['"this network" 0/8', 'https://0.1.2.3/'],
    ['private 10/8', 'https://10.1.2.3/'],
    ['private 10/8, decimal', 'https://167837953/'],
    ['private 172.16/12', 'https://172.16.0.1/'],
    ['private 172.16/12, its last', 'https://172.31.255.255/'],
    ['private 192.168/16', 'https://192.168.1.1/'],
    ['shared address space 100.64/10', 'https://100.64.0.1/'],
    ['shared address space 100.64/10, its last', 'https://100.127.255.254/'],
    ['link-local, cloud metadata', 'https://169.254.169.254/'],
    ['link-local, cloud metadata in hex', 'https://0xa9fea9fe/'],
    ['benchmarking 198.18/15', 'https://198.18.0.1/'],
    ['benchmarking 198.18/15, its second half', 'https://198.19.255.254/'],
    ['IETF protocol assignments 192.0.0/24', 'https://192.0.0.8/'],
    ['documentation 192.0.2/24', 'https://192.0.2.1/'],
    ['documentation 198.51.100/24', 'https://198.51.100.7/'],
    ['documentation 203.0.113/24', 'https://203.0.113.9/'],
    ['IPv4 multicast', 'https://224.0.0.1/'],
    ['IPv4 multicast, SSDP', 'https://239.255.255.250/'],
    ['IPv4 reserved 240/4', 'https://240.0.0.1/'],
    ['IPv4 broadcast', 'https://255.255.255.255/'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['IPv6 loopback, long form', 'https://[0:0:0:0:0:0:0:1]/'],
    ['IPv6 unspecified', 'https://[::]/'],
    ['IPv4-mapped loopback, dotted', 'https://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped loopback, hex', 'https://[::ffff:7f00:1]/'],
    ['IPv4-mapped loopback, long form', 'https://[0:0:0:0:0:ffff:7f00:0001]/'],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/'],
    ['IPv4-mapped metadata', 'https://[::ffff:a9fe:a9fe]/'],
    ['IPv4-mapped "this network"', 'https://[::ffff:0.0.0.0]/'],
    ['IPv4-translated loopback', 'https://[::ffff:0:7f00:1]/'],
    ['IPv4-compatible loopback', 'https://[::127.0.0.1]/'],
    ['IPv4-compatible public (deprecated: never a real host)', 'https://[::8.8.8.8]/'],
    ['link-local fe80::/10', 'https://[fe80::1]/'],
    ['link-local fe80::/10, fe90::', 'https://[fe90::1]/'],
    ['link-local fe80::/10, its last', 'https://[febf:ffff::1]/'],
    ['site-local fec0::/10', 'https://[fec0::1]/'],
    ['unique-local fc00::/7', 'https://[fc00::1]/'],
    ['unique-local fd00::/8', 'https://[fd12:3456:789a::1]/'],
    ['NAT64 of loopback', 'https://[64:ff9b::7f00:1]/'],
    ['NAT64 of loopback, dotted', 'https://[64:ff9b::127.0.0.1]/'],
    ['NAT64 of private 10/8', 'https://[64:ff9b::a00:1]/'],
    ['NAT64 of private 192.168/16', 'https://[64:ff9b::192.168.1.1]/'],
    ['NAT64 of metadata', 'https://[64:ff9b::a9fe:a9fe]/'],
    ['local-use NAT64 64:ff9b:1::/48', 'https://[64:ff9b:1::8.8.8.8]/'],
    ['6to4 of loopback', 'https://[2002:7f00:1::1]/'],
    ['6to4 of private', 'https://[2002:c0a8:101::1]/'],
    ['Teredo 2001::/32', 'https://[2001::53aa:64c:0:0]/'],
    ['documentation 2001:db8::/32', 'https://[2001:db8::1]/'],
    ['discard-only 100::/64', 'https://[100::1]/'],
    ['IPv6 multicast, link scope', 'https://[ff02::1]/'],
    ['IPv6 multicast, site scope', 'https://[ff05::1:3]/'],
    ['IPv6 multicast, global scope', 'https://[ff0e::101]/'],
  ];
  const publicForms: Array<[why: string, url: string]> = [
    ['a public IPv4 address', 'https://93.184.216.34/'],
    ['a public IPv4 address, decimal', 'https://134744072/'],
    ['beside 172.16/12', 'https://172.32.0.1/'],
    ['beside 100.64/10', 'https://100.128.0.1/'],
    ['beside 198.18/15', 'https://198.20.0.1/'],
    ['beside multicast', 'https://223.255.255.254/'],
    ['a public IPv6 address', 'https://[2606:4700::1111]/'],
    ['a public IPv6 address, Google DNS', 'https://[2001:4860:4860::8888]/'],
    ['IPv4-mapped public', 'https://[::ffff:8.8.8.8]/'],
    ['NAT64 of a public IPv4 address', 'https://[64:ff9b::808:808]/'],
    ['6to4 of a public IPv4 address', 'https://[2002:808:808::1]/'],
  ];

  for (const [why, url] of refusedForms) {
    it(`refuses ${why}: ${url} (as ${new URL(url).hostname})`, () => assert.equal(refused(url), true));
  }
  for (const [why, url] of publicForms) {
    it(`admits ${why}: ${url}`, () => assert.equal(refused(url), false));
  }

  it('refuses what is not an address at all (the check takes addresses, never names)', () => {
    for (const text of ['localhost', '', 'not-an-ip', '1.2.3']) assert.equal(isPrivateAddress(text), true, text);
    // A resolver may answer a link-local address with its zone (the URL parser refuses zones).
    assert.equal(isPrivateAddress('fe80::1%eth0'), true);
  });

  it('checks a name on what it resolves to: localhost is loopback', async () => {
    assert.equal(await refusedDestination(new URL('https://localhost/')), 'private_address');
    assert.equal(await refusedDestination(new URL('https://[::ffff:7f00:1]/')), 'private_address');
    assert.equal(await refusedDestination(new URL('https://8.8.8.8/')), null);
  });

  it('refuses every such form at registration where private addresses are refused, and in live always', async () => {
    const expectRefused = async (url: string, environment: 'sandbox' | 'live') => {
      await assert.rejects(checkUrl(url, environment, 'refuse'), (error: unknown) => {
        assert.ok(error instanceof DomainError, url);
        assert.deepEqual([error.code, error.details], ['invalid_request', 'url'], url);
        return true;
      }, url);
    };
    for (const [, url] of refusedForms) {
      await expectRefused(url, 'live');
      await expectRefused(url.replace('https:', 'http:'), 'sandbox');
    }
    await expectRefused('https://localhost:8443/hooks', 'live');
    for (const [, url] of publicForms) assert.equal(await checkUrl(url, 'live', 'refuse'), new URL(url).toString(), url);
    // The sandbox's own setting, as today: a receiver on the developer's machine gets events.
    assert.equal(await checkUrl('http://127.0.0.1:9/hooks', 'sandbox', 'allow'), 'http://127.0.0.1:9/hooks');
  });

  it('refuses private addresses by default wherever the sandbox is reachable beyond loopback, allows them on loopback, never in live', () => {
    const secrets = Object.fromEntries(SECRET_NAMES.map((name) => [name, `${name.toLowerCase()}_${randomBytes(24).toString('base64url')}`]));
    // The Docker setup serves the sandbox on 0.0.0.0: anyone who signs up there must not reach the network inside.
    for (const host of ['0.0.0.0', '::', '10.0.0.5']) assert.equal(loadConfig({ ...secrets, HOST: host }).webhookPrivateAddresses, 'refuse', host);
    assert.equal(loadConfig({ ...secrets, HOST: '0.0.0.0', WEBHOOK_PRIVATE_ADDRESSES: 'allow' }).webhookPrivateAddresses, 'allow');
    assert.equal(loadConfig({ HOST: '127.0.0.1' }).webhookPrivateAddresses, 'allow');
    assert.equal(loadConfig({ HOST: '127.0.0.1', WEBHOOK_PRIVATE_ADDRESSES: 'refuse' }).webhookPrivateAddresses, 'refuse');
    assert.equal(loadConfig({ ...secrets, ENVIRONMENT: 'live' }).webhookPrivateAddresses, 'refuse');
    assert.throws(() => loadConfig({ ...secrets, ENVIRONMENT: 'live', WEBHOOK_PRIVATE_ADDRESSES: 'allow' }), /for sandboxes only/);
  });
});

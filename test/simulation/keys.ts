// The ids a client makes itself (Idempotency-Keys, the ids of its illegal or foreign references,
// the emails of recipients nobody has) drawn from a seeded stream of its own, never from
// crypto.randomUUID: the same seed sends the same keys, so a trace's keys mean the same in a replay.
import { prng } from '../support/prng';

export class KeySource {
  private readonly random: () => number;
  constructor(seed: number) { this.random = prng(seed); }

  /** A version-4 UUID (RFC 9562: version nibble 4, variant bits 10), lower-case. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.random() * 16).toString(16));
    hex[12] = '4';
    hex[16] = (8 + Math.floor(this.random() * 4)).toString(16);
    const s = hex.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}

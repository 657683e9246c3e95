// The sandbox magic amounts of the mock rails (src/mock-rails/magic.ts): the cents of an amount
// pick a partner behaviour. A pure table: amount in, behaviour out.
import assert from 'node:assert/strict';
import { magicBehaviour, type MagicBehaviour } from '../../src/mock-rails/magic';

describe('mock rails magic amounts', () => {
  const table: Array<[amount: string, behaviour: MagicBehaviour, why: string]> = [
    ['10.13', 'outage', 'cents 13'],
    ['250.13', 'outage', 'cents 13, any whole part'],
    ['0.13', 'outage', 'cents 13, no whole units'],
    ['10.130', 'outage', 'trailing zeros do not count'],
    ['0.130000', 'outage', 'a 6-decimal stablecoin amount with cents 13'],
    ['10.55', 'lost_answer', 'cents 55'],
    ['10.66', 'decline', 'cents 66'],
    ['1000000.66', 'decline', 'cents 66, large amount'],
    ['10.77', 'error', 'cents 77'],
    ['10.99', 'reverse', 'cents 99'],
    ['5.990000', 'reverse', 'cents 99 on a stablecoin amount'],
    ['10.00', 'normal', 'no cents'],
    ['10', 'normal', 'no fraction at all'],
    ['13', 'normal', 'the whole part is not the cents'],
    ['13.00', 'normal', 'the whole part is not the cents, with a fraction'],
    ['10.1', 'normal', 'one decimal means cents 10'],
    ['10.31', 'normal', 'the digits of 13 reversed'],
    ['10.013', 'normal', 'sub-cent 13 is not cents 13'],
    ['10.135', 'normal', 'sub-cent precision is never magic'],
    ['10.131', 'normal', 'cents 13 followed by a non-zero digit'],
    ['-10.13', 'normal', 'malformed: a sign (the partner validates amounts separately)'],
    ['10.13.0', 'normal', 'malformed: two points'],
    ['', 'normal', 'malformed: empty'],
    [' 10.13', 'normal', 'malformed: whitespace'],
  ];

  for (const [amount, behaviour, why] of table) {
    it(`"${amount}" is ${behaviour} (${why})`, () => {
      assert.equal(magicBehaviour(amount), behaviour);
    });
  }
});

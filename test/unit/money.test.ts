// The money module (ledger/money.ts; DESIGN.md section 4): what parseAmount accepts and refuses,
// full-scale formatting, currency codes, and exact decimal arithmetic. Pure: no service needed.
import assert from 'node:assert/strict';
import { CURRENCY_SCALE, formatAmount, InvalidMoney, Money, parseAmount, requireCurrency, type Currency } from '../../ledger/money';

/** The refusal every bad amount gets: invalid_request naming the field (the API answers it 400). */
function isInvalidAmount(field: string) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof InvalidMoney, `expected InvalidMoney, got ${String(error)}`);
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.field, field);
    assert.ok(error.message.length > 0);
    return true;
  };
}

describe('money: parseAmount', () => {
  const accepted: Array<[text: string, currency: Currency, exact: string]> = [
    ['10', 'USD', '10'],
    ['10.5', 'USD', '10.5'],
    ['10.50', 'USD', '10.5'],
    ['0.01', 'USD', '0.01'],
    ['0.5', 'EUR', '0.5'],
    ['1.123456', 'USDC', '1.123456'],
    ['0.000001', 'EURC', '0.000001'],
    ['123456789012345678.00', 'USD', '123456789012345678'],
    ['123456789012345678.123456', 'USDC', '123456789012345678.123456'],
  ];
  for (const [text, currency, exact] of accepted) {
    it(`accepts ${JSON.stringify(text)} for ${currency}`, () => {
      const amount = parseAmount(text, currency);
      assert.equal(amount.toFixed(), exact);
      assert.ok(amount.isGreaterThan(0));
    });
  }

  // Each is refused with 400 invalid_request and details naming the field.
  const refused: Array<[why: string, input: unknown, currency: Currency]> = [
    ['more decimals than the USD scale (2)', '10.505', 'USD'],
    ['more decimals than the USD scale, even trailing zeros', '10.500', 'USD'],
    ['more decimals than the USDC scale (6)', '1.1234567', 'USDC'],
    ['zero', '0', 'USD'],
    ['zero at full scale', '0.00', 'USD'],
    ['zero at the stablecoin scale', '0.000000', 'USDC'],
    ['negative', '-1', 'USD'],
    ['negative with decimals', '-0.01', 'USD'],
    ['exponent notation', '1e3', 'USD'],
    ['leading space', ' 1', 'USD'],
    ['trailing space', '1 ', 'USD'],
    ['leading zero', '01.00', 'USD'],
    ['empty string', '', 'USD'],
    ['trailing dot', '10.', 'USD'],
    ['leading dot', '.5', 'USD'],
    ['plus sign', '+1', 'USD'],
    ['thousands separator', '1,000.00', 'USD'],
    ['hexadecimal', '0x10', 'USD'],
    ['Infinity', 'Infinity', 'USD'],
    ['NaN', 'NaN', 'USD'],
    ['19 integer digits', '1234567890123456789.00', 'USD'],
    ['a JSON number, not a string', 10, 'USD'],
    ['a JSON number with decimals', 10.5, 'USD'],
    ['null', null, 'USD'],
    ['missing', undefined, 'USD'],
    ['an object', { value: '10.00' }, 'USD'],
  ];
  for (const [why, input, currency] of refused) {
    it(`refuses ${why}: ${JSON.stringify(input) ?? 'undefined'} for ${currency} → invalid_request`, () => {
      assert.throws(() => parseAmount(input, currency), isInvalidAmount('amount'));
    });
  }

  it('names the field it was given in details', () => {
    assert.throws(() => parseAmount('0', 'USD', 'quote.amount'), isInvalidAmount('quote.amount'));
  });
});

describe('money: formatAmount prints the full scale of the currency', () => {
  const table: Array<[input: string, currency: Currency, printed: string]> = [
    ['10', 'USD', '10.00'],
    ['10.5', 'USD', '10.50'],
    ['0.01', 'GBP', '0.01'],
    ['1.5', 'USDC', '1.500000'],
    ['1', 'EURC', '1.000000'],
    ['123456789012345678', 'USD', '123456789012345678.00'],
    ['0', 'EUR', '0.00'],
    // Never exponent notation, however small or large.
    ['0.000001', 'USDC', '0.000001'],
    ['100000000000000000000', 'USD', '100000000000000000000.00'],
  ];
  for (const [input, currency, printed] of table) {
    it(`${input} ${currency} → ${printed}`, () => {
      assert.equal(formatAmount(input, currency), printed);
      assert.equal(formatAmount(new Money(input), currency), printed);
    });
  }

  it('round-trips every accepted amount: parse then format prints the scale', () => {
    for (const currency of Object.keys(CURRENCY_SCALE) as Currency[]) {
      const printed = formatAmount(parseAmount('7', currency), currency);
      assert.equal(printed.split('.')[1].length, CURRENCY_SCALE[currency], `${currency}: ${printed}`);
    }
  });
});

describe('money: requireCurrency', () => {
  for (const code of ['USD', 'EUR', 'GBP', 'USDC', 'EURC']) {
    it(`accepts ${code}`, () => assert.equal(requireCurrency(code), code));
  }
  const refused: Array<[code: string, why: string]> = [
    ['usd', 'lower case'],
    ['XXX', 'unknown code'],
    ['', 'empty'],
    ['US D', 'space'],
    ['toString', 'an Object.prototype member'],
  ];
  for (const [code, why] of refused) {
    it(`refuses ${JSON.stringify(code)} (${why}) → invalid_currency`, () => {
      assert.throws(() => requireCurrency(code), (error: unknown) => {
        assert.ok(error instanceof InvalidMoney);
        assert.equal(error.code, 'invalid_currency');
        assert.equal(error.field, 'currency');
        return true;
      });
    });
  }
});

describe('money: arithmetic is exact decimal, never binary floating point', () => {
  it('0.10 + 0.20 is exactly 0.30 (where JS numbers give 0.30000000000000004)', () => {
    assert.notEqual(0.1 + 0.2, 0.3); // the trap the money module avoids
    const sum = parseAmount('0.10', 'USD').plus(parseAmount('0.20', 'USD'));
    assert.ok(sum.isEqualTo(parseAmount('0.30', 'USD')));
    assert.equal(formatAmount(sum, 'USD'), '0.30');
  });

  it('a thousand cents sum to exactly 10.00, and subtracting them back leaves exactly zero', () => {
    const cent = parseAmount('0.01', 'USD');
    let total = new Money(0);
    for (let i = 0; i < 1_000; i += 1) total = total.plus(cent);
    assert.equal(formatAmount(total, 'USD'), '10.00');
    for (let i = 0; i < 1_000; i += 1) total = total.minus(cent);
    assert.ok(total.isZero());
  });

  it('amounts beyond 2^53 stay exact (a JS number would lose the last digits)', () => {
    const big = parseAmount('123456789012345678.01', 'USD');
    assert.equal(formatAmount(big.plus(parseAmount('0.01', 'USD')), 'USD'), '123456789012345678.02');
    assert.notEqual(String(123456789012345678.01 + 0.01), '123456789012345678.02');
  });

  it('stablecoin micro-units add exactly: 0.000001 × 3 = 0.000003', () => {
    const micro = parseAmount('0.000001', 'USDC');
    assert.equal(formatAmount(micro.plus(micro).plus(micro), 'USDC'), '0.000003');
  });
});

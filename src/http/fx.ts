// FX quotes (SPEC.md section 4, FX; DESIGN.md section 5b). The public quote needs no credential
// and stores nothing: it prices an amount at the live rate, shows the mid-rate and the spread
// beside the rate, and says until when that price would hold. Callers without a credential are
// rate-limited by their address (src/guards/rate-limit.ts).
import { amountSchema, currencySchema, formatAmount, Money, parseAmount, requireCurrency } from '../../ledger/money';
import { DomainError } from '../errors';
import { isSupportedPair, price, RATE_DECIMALS } from '../fx/rates';
import { withBody, type RouteDef } from './route';

const decimal = (description: string) => ({ type: 'string', description } as const);
const quoteSchema = {
  type: 'object',
  required: ['from_currency', 'to_currency', 'from_amount', 'rate', 'mid_rate', 'spread', 'to_amount', 'expires_at'],
  properties: {
    from_currency: { type: 'string' }, to_currency: { type: 'string' },
    from_amount: decimal('the amount to convert, at the from currency\'s scale'),
    rate: decimal(`units of to_currency per unit of from_currency, after the spread, ${RATE_DECIMALS} decimals, rounded down`),
    mid_rate: decimal('the market mid-rate the rate derives from'),
    spread: decimal('the fraction of the amount the conversion costs: rate = mid_rate × (1 - spread), rounded down'),
    to_amount: decimal('from_amount × rate, rounded down to the to currency\'s scale'),
    expires_at: { type: 'string', format: 'date-time', description: 'until when the price holds' },
  },
};

export function fxRoutes(quoteLifetimeMs: number): RouteDef[] {
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['from_currency', 'to_currency', 'from_amount'],
      properties: { from_currency: currencySchema, to_currency: currencySchema, from_amount: amountSchema },
    }, {
      method: 'POST', path: '/v1/fx/quotes', operationId: 'createPublicFxQuote', tag: 'fx',
      summary: 'Price a conversion at the live rate (no credential; stores nothing)', auth: { kind: 'public' },
      response: { status: 200, description: 'the price', schema: quoteSchema },
      errors: ['invalid_currency', 'unsupported_pair'],
      handler: async ({ body }) => {
        const from = requireCurrency(body.from_currency, 'from_currency');
        const to = requireCurrency(body.to_currency, 'to_currency');
        if (!isSupportedPair(from, to)) {
          throw new DomainError('unsupported_pair', `${from} to ${to} is not a supported pair; USD, EUR and GBP convert among themselves`, 'to_currency');
        }
        const fromAmount = parseAmount(body.from_amount, from, 'from_amount');
        const now = new Date();
        const quote = price(from, to, fromAmount, now);
        if (new Money(quote.toAmount).isZero()) {
          throw new DomainError('invalid_request', `from_amount is too small to buy any ${to}`, 'from_amount');
        }
        return {
          status: 200,
          body: {
            from_currency: from, to_currency: to, from_amount: formatAmount(fromAmount, from), rate: quote.rate, mid_rate: quote.midRate,
            spread: quote.spread, to_amount: quote.toAmount, expires_at: new Date(now.getTime() + quoteLifetimeMs).toISOString(),
          },
        };
      },
    }),
  ];
}

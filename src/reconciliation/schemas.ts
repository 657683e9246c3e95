// The shapes of a reconciliation report's items, shared by the reports and the exceptions queue.

export const nullableText = { type: ['string', 'null'] };

export const MOVEMENTS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object', required: ['ledger_entry_id', 'reference', 'amount', 'value_date'],
    properties: { ledger_entry_id: { type: 'string', format: 'uuid' }, reference: nullableText, amount: { type: 'string' }, value_date: { type: 'string', format: 'date' } },
  },
} as const;

export const CANDIDATES_SCHEMA = {
  type: 'array',
  items: {
    type: 'object', required: ['ledger_entry_id', 'statement_line_id', 'reference', 'amount', 'value_date'],
    properties: {
      ledger_entry_id: { type: ['string', 'null'], format: 'uuid' }, statement_line_id: nullableText, reference: nullableText, amount: { type: 'string' }, value_date: { type: 'string', format: 'date' },
    },
  },
} as const;

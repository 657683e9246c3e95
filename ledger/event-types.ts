// The domain event types, as webhooks deliver them and the OpenAPI document lists them.

/** What SPEC.md section 6 delivers, the endpoint's own notice, and the events of holds. */
export const WEBHOOK_EVENT_TYPES = [
  'transfer.pending', 'transfer.executing', 'transfer.completed', 'transfer.failed', 'transfer.rolled_back', 'transfer.reversed',
  'payment.sent', 'payment.completed', 'payment.failed', 'balance.updated', 'webhook_endpoint.disabled',
  // A return through a partner the partner did not make (DESIGN.md section 5h).
  'reversal.failed',
  // Holds (DESIGN.md section 5g).
  'hold.created', 'hold.captured', 'hold.released',
  // Balance alerts (DESIGN.md section 5g).
  'balance.threshold_crossed',
  // Scheduled transfers (DESIGN.md section 5i): each run, created or refused.
  'scheduled_transfer.run',
] as const;

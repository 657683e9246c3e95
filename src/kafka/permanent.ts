// Failures to put a message on Kafka that no retry can mend: the payload does not fit its
// topic's schema, or the broker refuses the record itself (too large, invalid). Anything else
// (Kafka or the schema registry away, a leader moving, a timeout) may pass, and is retried.
const REFUSED_RECORD_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);
/** kafkajs wraps a protocol error it gives up on without keeping its type; its message stays. */
const REFUSED_RECORD_MESSAGES = [
  /message larger than the max message size/i, /message batch larger than the configured segment size/i,
  /record has failed the validation on broker/i, /failed its CRC checksum/i,
];

/** Why encoding `error` can never succeed, or null when it may (the registry away). */
export function permanentEncodingFailure(error: unknown): string | null {
  const { name, message } = error as Error;
  if (name === 'ConfluentSchemaRegistryValidationError' || /^no registered schema for topic/.test(message ?? '')) {
    return `encoding failed: ${message}`;
  }
  return null;
}

/** Why the broker will never store the record(s) of a send that failed with `error`, or null when a retry may. */
export function permanentSendFailure(error: unknown): string | null {
  for (let e = error as { type?: string; message?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.type === 'string' && REFUSED_RECORD_TYPES.has(e.type)) return `refused by Kafka (${e.type}): ${e.message}`;
    if (REFUSED_RECORD_MESSAGES.some((pattern) => pattern.test(e!.message ?? ''))) return `refused by Kafka: ${e.message}`;
  }
  return null;
}

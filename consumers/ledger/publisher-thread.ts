// The ledger's outbox publisher thread: encodes committed rounds (Avro) and sends them to Kafka,
// one after another in the order they were committed, while the main thread decides and writes
// the next round. Encoding and producing a round of 2,000 transfers (some 14,000 messages) took
// about 40 % of the ledger thread's busy time. The main thread marks a round published when this
// thread reports it sent (publisher.ts); a round it could not send is left to the sweeper.
import { sendBatches } from '../../src/kafka/send-batches';
import { runKafkaThread } from '../../src/kafka/thread';
import { toTopicMessages } from '../../src/outbox/encode';
import { PUBLISHER_ROLE, type FromPublisher, type ToPublisher } from './publisher-messages';

runKafkaThread<ToPublisher>(PUBLISHER_ROLE, async ({ names, codec, producer, report }) => {
  await codec.registerAll();
  return async ({ id, messages }) => {
    try {
      const topicMessages = await toTopicMessages({ names, codec }, messages);
      await sendBatches(producer, topicMessages);
      report({ kind: 'sent', id } satisfies FromPublisher);
    } catch (error) {
      report({ kind: 'lost', id, reason: (error as Error).message } satisfies FromPublisher);
    }
  };
});

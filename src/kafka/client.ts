// The Kafka client and producer of a process.
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { log } from '../log';

const LEVEL_NAMES: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug',
};

// kafkajs reports these at ERROR or WARN and then retries by itself (a new topic's leader not
// elected yet, a group coordinator still loading): they are not failures of this service.
const RETRIED_BY_KAFKAJS = /not the leader|no leader|coordinator is (loading|not available)|group is rebalancing|Limiting retries for the idempotent producer/i;

export function createKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log: entry }) => {
      const { message, ...extra } = entry;
      const routine = RETRIED_BY_KAFKAJS.test(`${message} ${String(extra.error ?? '')}`);
      log[routine ? 'debug' : LEVEL_NAMES[level] ?? 'info']({ kafka: namespace, ...extra }, message);
    },
    retry: { initialRetryTime: 100, retries: 8 },
  });
}

export async function createProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return producer;
}


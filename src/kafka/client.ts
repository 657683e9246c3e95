// The Kafka client and producer of a process.
import { Kafka, logLevel, Partitioners, type Producer, type Message } from 'kafkajs';
import { log } from '../log';

const LEVEL_NAMES: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error', [logLevel.WARN]: 'warn', [logLevel.INFO]: 'info', [logLevel.DEBUG]: 'debug',
};

export function createKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log: entry }) => {
      const { message, ...extra } = entry;
      log[LEVEL_NAMES[level] ?? 'info']({ kafka: namespace, ...extra }, message);
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

export type KafkaMessage = Message;

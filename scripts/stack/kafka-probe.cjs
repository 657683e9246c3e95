// Is the broker at argv[2] (host:port) ready? It answers a metadata request naming at least one
// broker. Exits 0 when ready, 1 when not, 2 when kafkajs is not installed yet. Uses the
// project's own Kafka client (node_modules/kafkajs), with its logging off and no retries: the
// caller (scripts/stack/kafka.sh) polls.
const path = require('node:path');

let Kafka;
let logLevel;
try {
  ({ Kafka, logLevel } = require(path.join(__dirname, '..', '..', 'node_modules', 'kafkajs')));
} catch {
  console.error('kafkajs is not installed: run npm ci first (npm start and npm test do it)');
  process.exit(2);
}

const admin = new Kafka({
  clientId: 'stack-probe', brokers: [process.argv[2]], logLevel: logLevel.NOTHING,
  connectionTimeout: 2000, requestTimeout: 3000, retry: { retries: 0 },
}).admin();

(async () => {
  try {
    await admin.connect();
    const { brokers } = await admin.describeCluster();
    process.exitCode = brokers.length >= 1 ? 0 : 1;
  } catch {
    process.exitCode = 1;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
})();

// Is the broker at argv[2] (host:port) ready? It answers a metadata request naming at least one
// broker. Exits 0 when ready, 1 when not. Node's own sockets, no package: the stack starts before
// npm ci has put node_modules in (scripts/stack-env.sh), and the caller (scripts/stack/kafka.sh)
// polls.
//
// The request is Metadata v4 (the oldest Kafka 4 still answers) for no topic; the answer is read
// only as far as its broker count: correlation id, throttle time, then the brokers array's length.
const net = require('node:net');

const [host, port] = process.argv[2].split(':');
const CORRELATION_ID = 1;
const clientId = Buffer.from('stack-probe');

const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 1);
let at = 0;
at = body.writeInt16BE(3, at); // api key: Metadata
at = body.writeInt16BE(4, at); // api version
at = body.writeInt32BE(CORRELATION_ID, at);
at = body.writeInt16BE(clientId.length, at);
at += clientId.copy(body, at);
at = body.writeInt32BE(0, at); // topics: none
body.writeInt8(0, at); // allow_auto_topic_creation: false
const size = Buffer.alloc(4);
size.writeInt32BE(body.length);

const socket = net.connect({ host, port: Number(port) });
const done = (code) => { process.exitCode = code; socket.destroy(); };
socket.setTimeout(3000, () => done(1));
socket.on('error', () => done(1));
socket.on('connect', () => socket.write(Buffer.concat([size, body])));
let received = Buffer.alloc(0);
socket.on('data', (chunk) => {
  received = Buffer.concat([received, chunk]);
  if (received.length < 4 + 4 + 4 + 4) return;
  const correlationId = received.readInt32BE(4);
  const brokers = received.readInt32BE(12);
  done(correlationId === CORRELATION_ID && brokers >= 1 ? 0 : 1);
});
socket.on('end', () => done(1));

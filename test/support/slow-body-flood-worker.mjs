// The attacker's side of the issue 20 item 2 slow-body floods (test/support/slow-body-flood.ts),
// run in a worker thread so its connections, TLS handshakes and writes do not share the event
// loop of the admission server under test: a real attacker's CPU is not the server's.
// Plain JavaScript: worker threads load it without vitest's TypeScript transform.
// workerData: { port, path, connections, declaredBytes, burstBytes, localAddress?, ca? }.
// Posts { open } once every connection has been opened once; on the message 'stop', closes
// everything and posts { peakOpen }.
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

const { port, path, connections, declaredBytes, burstBytes, localAddress, ca } = workerData;
const open = new Set();
let peakOpen = 0;
let everOpened = 0;
let isFlooding = true;

function openRaw() {
  const local = localAddress === undefined ? {} : { localAddress };
  const socket = ca === undefined ? connect({ port, host: '127.0.0.1', ...local }) : tlsConnect({ port, host: '127.0.0.1', servername: 'localhost', ca, ...local });
  return new Promise((resolve) => {
    socket.once(ca === undefined ? 'connect' : 'secureConnect', () => resolve(socket));
    socket.once('error', () => resolve(undefined));
  });
}

function head() {
  return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${declaredBytes}\r\n\r\n`;
}

async function trickler(index) {
  let isFirst = true;
  while (isFlooding) {
    const socket = await openRaw();
    if (socket === undefined) {
      await sleep(50);
      continue;
    }
    let isClosed = false;
    // Open means the server still holds it: it leaves the count the moment either side ends it.
    const onClosed = () => {
      isClosed = true;
      open.delete(socket);
    };
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.once('close', onClosed);
    socket.once('end', onClosed);
    open.add(socket);
    peakOpen = Math.max(peakOpen, open.size);
    if (isFirst) {
      isFirst = false;
      everOpened += 1;
      if (everOpened === connections) parentPort.postMessage({ open: open.size });
    }
    socket.write(head() + '{' + ' '.repeat(Math.max(0, burstBytes - 1)));
    while (isFlooding && !isClosed) {
      await sleep(500);
      if (!isClosed && !socket.destroyed) socket.write(' ');
    }
    open.delete(socket);
    socket.destroy();
  }
  return index;
}

const tricklers = Array.from({ length: connections }, (_, i) => trickler(i));
parentPort.on('message', async (message) => {
  if (message !== 'stop') return;
  isFlooding = false;
  for (const socket of open) socket.destroy();
  await Promise.all(tricklers);
  parentPort.postMessage({ peakOpen });
  parentPort.close();
});

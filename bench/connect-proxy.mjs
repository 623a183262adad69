// A plain HTTP CONNECT proxy for the diagnosis fault matrix (bench/diagnosis.ts), run as its own process so it
// can be frozen: `node bench/connect-proxy.mjs PORT` listens on 127.0.0.1:PORT and tunnels every CONNECT.
import { createServer } from 'node:http';
import { connect } from 'node:net';
import process from 'node:process';

const server = createServer((_req, res) => res.writeHead(405).end());
server.on('connect', (req, client) => {
  client.on('error', () => {});
  const [host, port] = (req.url ?? '').split(':');
  const upstream = connect(Number(port), host, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
});
server.listen(Number(process.argv[2]), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));

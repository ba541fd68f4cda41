/**
 * TLS and a user name: connect over amqps://, trusting a private CA, with SASL PLAIN.
 * The password comes from the environment, not the command line.
 *
 *   npx quorate-broker --port 5671 --tls-cert cert.pem --tls-key key.pem --users users.txt --no-anonymous &
 *   QUORATE_USER=alice QUORATE_PASSWORD=secret npx tsx examples/tls-users.ts amqps://localhost:5671 cert.pem
 */
import { readFileSync } from 'node:fs';
import { connect } from 'quorate';

const [url = 'amqps://localhost:5671', caFile] = process.argv.slice(2);
const conn = await connect({
  urls: url,
  username: process.env.QUORATE_USER,
  password: process.env.QUORATE_PASSWORD,
  // Node's TLS options: `ca` trusts a private CA; the host name is verified against the certificate.
  tls: caFile === undefined ? {} : { ca: readFileSync(caFile) },
  reconnect: false, // a wrong password or certificate will not get better by retrying
});
try {
  const sender = await conn.openSender('example-secure');
  const result = await sender.send({ body: 'hello over TLS' }, { timeoutMs: 10_000 });
  console.log(`connected to ${conn.url} as ${process.env.QUORATE_USER ?? '(anonymous)'}: ${result.state}`);
} finally {
  await conn.close();
}

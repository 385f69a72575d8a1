/**
 * Certificates for https in tests, in ./tls, valid until 2126. `ca.pem` is a test certificate authority
 * (its key was thrown away) that every test process trusts (vitest.config.ts gives it to them as
 * NODE_EXTRA_CA_CERTS); `localhost.pem` is signed by it for the name `localhost` only; `self-signed.pem`
 * names `localhost` too and is signed by nobody a client trusts. Made with OpenSSL 3.0:
 *
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
 *     -subj "/CN=Wallet Checkout test CA" -addext basicConstraints=critical,CA:TRUE \
 *     -addext keyUsage=critical,keyCertSign,cRLSign -keyout ca-key.pem -out ca.pem
 *   openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
 *     -keyout localhost-key.pem -out localhost.csr
 *   openssl x509 -req -in localhost.csr -CA ca.pem -CAkey ca-key.pem -days 36500 -out localhost.pem \
 *     -extfile <(printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n')
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
 *     -subj /CN=localhost -addext subjectAltName=DNS:localhost -keyout self-signed-key.pem -out self-signed.pem
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = (name: string) => fileURLToPath(new URL(`./tls/${name}`, import.meta.url));

/** The test certificate authority, for NODE_EXTRA_CA_CERTS. */
export const TEST_CA_FILE = file('ca.pem');

export const LOCALHOST_TLS = {
  cert: fs.readFileSync(file('localhost.pem'), 'utf8'),
  key: fs.readFileSync(file('localhost-key.pem'), 'utf8'),
};

export const SELF_SIGNED_TLS = {
  cert: fs.readFileSync(file('self-signed.pem'), 'utf8'),
  key: fs.readFileSync(file('self-signed-key.pem'), 'utf8'),
};

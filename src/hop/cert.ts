// The hop's certificates, made at start: a self-signed CA and a server certificate it signs for 127.0.0.1,
// localhost and ::1, written as PEM files so a client can trust the CA (`target.tls.ca`, curl --cacert).
// EC P-256 keys: about ten times faster to make than RSA, and every TLS stack takes them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface HopCertificates {
  /** PEM file of the CA to trust. */
  caFile: string;
  certFile: string;
  keyFile: string;
  ca: string;
  cert: string;
  key: string;
}

const CA_FILE = 'ca.pem';
const CA_KEY_FILE = 'ca-key.pem';
const CERT_FILE = 'server.pem';
const KEY_FILE = 'server-key.pem';
/** Back-date validity a little so a client whose clock is slightly behind still accepts the certificate. */
const BACKDATE_MS = 60 * 60 * 1000;
const VALID_DAYS = 825;

function validity(): { notBeforeDate: Date; notAfterDate: Date } {
  const notBeforeDate = new Date(Date.now() - BACKDATE_MS);
  return { notBeforeDate, notAfterDate: new Date(notBeforeDate.getTime() + VALID_DAYS * 86_400_000) };
}

/**
 * Makes (or, when `dir` already holds a CA from an earlier start, reuses) the CA, then a fresh server
 * certificate signed by it, and writes them to `dir` (keys readable by the owner only).
 */
export async function makeCertificates(dir: string, hosts: { dns: readonly string[]; ips: readonly string[] } = { dns: ['localhost'], ips: ['127.0.0.1', '::1'] }): Promise<HopCertificates> {
  // The certificate library (and its ASN.1 stack: about 0.2 CPU-s to load) only when a hop starts.
  const { generate } = await import('selfsigned');
  mkdirSync(dir, { recursive: true });
  const caFile = join(dir, CA_FILE);
  const caKeyFile = join(dir, CA_KEY_FILE);
  let ca: { cert: string; key: string };
  if (existsSync(caFile) && existsSync(caKeyFile)) {
    // A stable CA across restarts: clients configured once keep trusting the hop.
    ca = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') };
  } else {
    const made = await generate([{ name: 'commonName', value: 'roundload hop CA' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      ...validity(),
      extensions: [
        { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    });
    ca = { cert: made.cert, key: made.private };
    writeFileSync(caKeyFile, ca.key, { mode: 0o600 });
    writeFileSync(caFile, ca.cert);
  }
  const server = await generate([{ name: 'commonName', value: hosts.dns[0] ?? 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity(),
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...hosts.dns.map((value) => ({ type: 2 as const, value })), ...hosts.ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  const certFile = join(dir, CERT_FILE);
  const keyFile = join(dir, KEY_FILE);
  writeFileSync(keyFile, server.private, { mode: 0o600 });
  // The chain a server presents: its own certificate, then the CA's.
  writeFileSync(certFile, `${server.cert.trim()}\n${ca.cert.trim()}\n`);
  return { caFile, certFile, keyFile, ca: ca.cert, cert: readFileSync(certFile, 'utf8'), key: server.private };
}

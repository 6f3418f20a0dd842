/**
 * A throwaway CA and a serving certificate signed by it, for loopback webhooks in tests, the
 * benchmark and local tools (`caBundle` = the CA; the server presents the leaf). Never for
 * production: there, the serving certificate comes from cert-manager or the platform.
 *
 * node:crypto cannot create certificates, so this uses @peculiar/x509 (a devDependency) over
 * WebCrypto. Keys are ECDSA P-256, which both Node and the Go API server accept.
 * @module
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export interface ServingCertificates {
  /** PEM of the CA: the webhook configuration's `caBundle` (base64 of this text). */
  readonly caPem: string;
  /** PEM of the serving certificate followed by the CA. */
  readonly certPem: string;
  /** PEM (PKCS#8) of the serving key. */
  readonly keyPem: string;
}

export interface ServingCertificateOptions {
  /** DNS names in the subjectAltName; default `localhost`. */
  readonly dnsNames?: readonly string[];
  /** IP addresses in the subjectAltName; default `127.0.0.1` and `::1`. */
  readonly ipAddresses?: readonly string[];
  /** Validity from one minute ago, in days; default 1. */
  readonly validDays?: number;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/**
 * Generates a CA and a serving certificate for the given names.
 * Out: PEM texts. Failures: rejects only if WebCrypto fails. Not pure (random keys).
 */
export async function generateServingCertificates(options: ServingCertificateOptions = {}): Promise<ServingCertificates> {
  const crypto = webcrypto;
  x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + (options.validDays ?? 1) * DAY_MS);
  const caKeys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex').replace(/^[89a-f]/, '1'),
    name: 'CN=dynamo-fn admission test CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  const leafKeys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const names = [
    ...(options.dnsNames ?? ['localhost']).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? ['127.0.0.1', '::1']).map((value) => ({ type: 'ip' as const, value })),
  ];
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex').replace(/^[89a-f]/, '1'),
    subject: 'CN=dynamo-fn admission',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  });
  const caPem = ca.toString('pem') + '\n';
  return {
    caPem,
    certPem: leaf.toString('pem') + '\n' + caPem,
    keyPem: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', leafKeys.privateKey)),
  };
}

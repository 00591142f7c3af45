import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { ConnectorCredentials } from '../../api/connectors.js';

/** A connector's secrets as the store keeps them: AES-256-GCM under a key derived from the data dir's secret. */
export interface SealedCredentials {
  iv: string;
  tag: string;
  data: string;
}

/** Seals and opens connector credentials; the plaintext exists only while a sync sends it. */
export class CredentialBox {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'svc connector credentials', 32));
  }

  seal(credentials: ConnectorCredentials): SealedCredentials {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
  }

  open(sealed: SealedCredentials | undefined): ConnectorCredentials {
    if (!sealed) return {};
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8'));
  }
}

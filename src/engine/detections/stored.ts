import type { Detection, WebhookAction } from '../../api/detections.js';

/** A detection as the store keeps it: its actions with their secrets, and a version each update moves. */
export interface StoredDetection extends Omit<Detection, 'actions' | 'next_run_at' | 'last_run_at'> {
  tenant_id: string;
  actions: WebhookAction[];
  version: number;
}

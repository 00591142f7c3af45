import { rmSync } from 'node:fs';
import type { Tenant, TenantCreate } from '../../api/identity.js';
import type { DataDeletionJob } from '../../api/jobs.js';
import type { Caller } from '../auth/caller.js';
import type { Directory, TenantState } from '../auth/directory.js';
import type { Keys } from '../auth/keys.js';
import { NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { removePrefix, type Store } from '../store/db.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { layout } from '../layout.js';
import { keys } from '../store/keys.js';

const view = (t: TenantState): Tenant => ({ tenant_id: t.tenant_id, name: t.name, created_at: t.created_at });

/** Tenants a platform provisions, lists and deletes; the caller acts in the platform's own tenant. */
export class PlatformTenants {
  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly directory: Directory,
    private readonly keys: Keys,
    private readonly derived: DerivedIndexes,
  ) {}

  async create(caller: Caller, req: TenantCreate): Promise<Tenant> {
    return view(await this.directory.provisionTenant(caller.tenant_id, req.name));
  }

  list(caller: Caller): Tenant[] {
    return this.directory.provisionedBy(caller.tenant_id).map(view);
  }

  /** Deletes every record, object, index, key and membership of a provisioned tenant. */
  async delete(caller: Caller, tenantId: string): Promise<DataDeletionJob> {
    const tenant = this.directory.tenant(tenantId);
    if (!tenant || tenant.platform_tenant_id !== caller.tenant_id) throw new NotFound(`tenant '${tenantId}' not found`);
    const started = now();
    const deleted = await this.store.meta.transaction(() => {
      const records = removePrefix(this.store.records, [tenantId]);
      removePrefix(this.store.ids, [tenantId]);
      this.keys.removeTenant(tenantId);
      this.directory.removeTenant(tenantId);
      removePrefix(this.store.meta, [tenantId]);
      return records;
    });
    await this.derived.dropTenant(tenantId);
    rmSync(layout.tenantBlobs(this.dataDir, tenantId), { recursive: true, force: true });
    const at = now();
    const job: DataDeletionJob = {
      job_id: newId('job'), tenant_id: caller.tenant_id, requested_by: caller.user_id, scope: 'tenant', status: 'succeeded',
      target_dataset_id: null, target_source_id: null, target_upload_session_id: null,
      item_total_count: 1, item_pending_count: 0, item_running_count: 0, item_succeeded_count: 1, item_failed_count: 0,
      items: [{
        item_id: 1, item_type: 'tenant', status: 'succeeded', attempt_count: 1, next_attempt_at: null, started_at: started,
        completed_at: at, created_at: started, updated_at: at, error_message: null, target: { tenant_id: tenantId }, result: { deleted_documents: deleted },
      }],
      error_message: null, created_at: started, started_at: started, completed_at: at, updated_at: at,
    };
    await this.store.meta.put(keys.deletionRecord(caller.tenant_id, job.job_id), job);
    return job;
  }
}

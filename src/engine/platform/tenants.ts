import { rmSync } from 'node:fs';
import type { Tenant, TenantCreate } from '../../api/identity.js';
import type { DataDeletionJob } from '../../api/jobs.js';
import type { Caller } from '../auth/caller.js';
import type { Directory, TenantState } from '../auth/directory.js';
import type { Keys } from '../auth/keys.js';
import { NotFound } from '../errors.js';
import { now } from '../ids.js';
import type { JobQueue, JobState } from '../jobs/queue.js';
import { deletionView, TENANT_DELETION_JOB } from '../deletion/deletion.js';
import { removePrefix, type Store } from '../store/db.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { layout } from '../layout.js';

const view = (t: TenantState): Tenant => ({ tenant_id: t.tenant_id, name: t.name, created_at: t.created_at });

/** Tenants a platform provisions, lists and deletes; the caller acts in the platform's own tenant. */
export class PlatformTenants {
  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly directory: Directory,
    private readonly keys: Keys,
    private readonly derived: DerivedIndexes,
    private readonly jobs: JobQueue,
  ) {
    jobs.register(TENANT_DELETION_JOB, {
      handler: (job) => this.run(job),
      maxAttempts: 5,
      freesSpace: true,
      // the tenant left the directory when the job was made: its data must go, whenever the job runs
      cancelRefused: () => 'a tenant deletion cannot be cancelled: the tenant is already gone',
      serialKey: (job) => `${job.tenant_id}/tenant:${String((job.payload.target as { tenant_id: string }).tenant_id)}`,
    });
  }

  async create(caller: Caller, req: TenantCreate): Promise<Tenant> {
    return view(await this.directory.provisionTenant(caller.tenant_id, req.name));
  }

  list(caller: Caller): Tenant[] {
    return this.directory.provisionedBy(caller.tenant_id).map(view);
  }

  /**
   * Deletes a provisioned tenant: at once it leaves the directory with its keys and memberships
   * (nobody can act in it any more), and a data-deletion job of scope `tenant` (pending) is
   * returned; the job removes its records, objects, indexes and metadata in the background.
   */
  async delete(caller: Caller, tenantId: string): Promise<DataDeletionJob> {
    const tenant = this.directory.tenant(tenantId);
    if (!tenant || tenant.platform_tenant_id !== caller.tenant_id) throw new NotFound(`tenant '${tenantId}' not found`);
    const at = now();
    const items: DataDeletionJob['items'] = [{
      item_id: 1, item_type: 'tenant', status: 'pending', attempt_count: 0, next_attempt_at: null, started_at: null,
      completed_at: null, created_at: at, updated_at: at, error_message: null, target: { tenant_id: tenantId }, result: {},
    }];
    const job = await this.store.meta.transaction(() => {
      this.keys.removeTenant(tenantId);
      this.directory.removeTenant(tenantId);
      return this.jobs.stage(caller.tenant_id, TENANT_DELETION_JOB, {
        target: { scope: 'tenant', dataset_id: null, source_id: null, source_key: null, tenant_id: tenantId }, requested_by: caller.user_id, items,
      });
    });
    this.jobs.poke();
    return deletionView(job);
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const tenantId = String((job.payload.target as { tenant_id: string }).tenant_id);
    const items = job.payload.items as DataDeletionJob['items'];
    const started = now();
    for (const item of items) Object.assign(item, { status: 'running', attempt_count: item.attempt_count + 1, started_at: item.started_at ?? started, updated_at: started });
    await this.jobs.update(job);
    const deleted = await this.store.meta.transaction(() => {
      const records = removePrefix(this.store.records, [tenantId]);
      removePrefix(this.store.ids, [tenantId]);
      this.keys.removeTenant(tenantId); // again: a key minted in it between the request and now
      this.directory.removeTenant(tenantId);
      removePrefix(this.store.meta, [tenantId]);
      return records;
    });
    await this.derived.dropTenant(tenantId);
    rmSync(layout.tenantBlobs(this.dataDir, tenantId), { recursive: true, force: true });
    const at = now();
    // a retry finds the records gone: the count of the attempt that removed them stays
    const count = Number(items[0]?.result.deleted_documents ?? 0) + deleted;
    for (const item of items) Object.assign(item, { status: 'succeeded', completed_at: at, updated_at: at, result: { deleted_documents: count } });
    await this.jobs.update(job);
    return { deleted_documents: count };
  }
}

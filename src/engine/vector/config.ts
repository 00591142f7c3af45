import { createHash } from 'node:crypto';
import type { SemanticConfig, Source } from '../../api/sources.js';
import type { DocumentField } from './chunks.js';
import type { EmbedderSettings } from './embedders/embedder.js';

export const DEFAULT_MAX_CHARS = 4000;

/** The semantic_config of a dataset's default source unless its creator says otherwise. */
export function defaultSemanticConfig(fields = ['title', 'body']): SemanticConfig {
  return { document_embeddings: { fields: fields.map((field) => ({ field, max_chars: DEFAULT_MAX_CHARS })) } };
}

/** What one source contributes: the fields it embeds, stamps and feeds to the vocabulary. */
export interface SourceSemantic {
  fields: DocumentField[];
  filters: NonNullable<SemanticConfig['filters']>['fields'];
  vocabulary: string[];
}

/** How a dataset's vectors are made, from its sources' semantic_config. */
export interface DatasetSemantic {
  /** the first source that embeds names the embedder: one vector space per dataset */
  embedder: Partial<EmbedderSettings> | undefined;
  bySource: Map<string, SourceSemantic>;
  /** the filter fields of every source (those every record can carry a stamp for) */
  filterFields: Set<string>;
}

/** Null when no source of the dataset embeds anything: the dataset has no vectors. */
export function datasetSemantic(sources: Source[]): DatasetSemantic | null {
  const embedding = sources.filter((s) => s.semantic_config?.document_embeddings?.fields?.length);
  if (embedding.length === 0) return null;
  const bySource = new Map<string, SourceSemantic>();
  let filterFields: string[] | null = null;
  for (const s of sources) {
    const c = s.semantic_config ?? {};
    const filters = c.filters?.fields ?? [];
    bySource.set(s.source_key, {
      fields: (c.document_embeddings?.fields ?? []).map((f) => ({ field: f.field, max_chars: f.max_chars ?? DEFAULT_MAX_CHARS })),
      filters,
      vocabulary: (c.vocabulary?.fields ?? []).map((f) => f.field),
    });
    const mine = filters.map((f) => f.field);
    filterFields = filterFields === null ? mine : filterFields.filter((f) => mine.includes(f));
  }
  return { embedder: embedding[0].semantic_config.embedder, bySource, filterFields: new Set(filterFields ?? []) };
}

/**
 * Names a vector space: the embedder alone. A new embedder (or model) makes a new generation,
 * embedded again from the records; a change of embedded fields applies to records embedded after
 * it, as adding or removing a source does not disturb the vectors of the others.
 */
export function spaceHash(embedderId: string): string {
  return createHash('sha1').update(embedderId).digest('hex').slice(0, 16);
}

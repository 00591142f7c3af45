import { BuiltinEmbedder, DEFAULT_POOLING } from './builtin.js';
import { type Embedder, type EmbedderSettings } from './embedder.js';
import { OnnxEmbedder, type OnnxOptions } from './onnx/onnxEmbedder.js';
import { OpenAIEmbedder, type OpenAIOptions } from './openai.js';
import { DEFAULT_EMBEDDINGS_FILE, wordVectors } from './wordVectors.js';

export const BUILTIN_ID = `builtin:wink-sg-100d:sif-${DEFAULT_POOLING.a}${DEFAULT_POOLING.removeComponent ? '-pc1' : ''}`;

/** The builtin embedder, its word vectors read on first use. */
class LazyBuiltin implements Embedder {
  readonly id = BUILTIN_ID;
  private inner: Promise<BuiltinEmbedder> | null = null;

  constructor(private readonly wordsFile: string) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.inner ??= wordVectors(this.wordsFile).then((w) => new BuiltinEmbedder(w));
    this.inner.catch(() => (this.inner = null));
    return (await this.inner).embed(texts);
  }
}

/**
 * Embedders by settings, one instance each (their concurrency limits are shared by every dataset
 * that uses them). A source's `semantic_config.embedder` overrides the server's default (from
 * SVC_EMBEDDER…, see config.ts); `wordsFile` is where the builtin embedder's word vectors are.
 */
export class Embedders {
  private readonly made = new Map<string, Embedder>();
  readonly defaults: EmbedderSettings;

  constructor(
    defaults: EmbedderSettings,
    private readonly openaiOptions: Partial<OpenAIOptions> = {},
    private readonly wordsFile = DEFAULT_EMBEDDINGS_FILE,
    private readonly onnxOptions: Partial<OnnxOptions> = {},
  ) {
    this.defaults = defaults;
  }

  /** The settings a source ends up with: its own provider, model and URL, the rest from the server. */
  resolve(own?: Partial<EmbedderSettings>): EmbedderSettings {
    let base: EmbedderSettings = !own?.provider || own.provider === this.defaults.provider ? this.defaults : { provider: own.provider };
    // prefixes belong to a model: a source naming another model does not get the server's
    if (own?.model !== undefined && own.model !== base.model) base = { ...base, query_prefix: undefined, document_prefix: undefined };
    // keys come from the environment only: a source's config is readable by every member
    return { ...base, ...stripUndefined(own ?? {}), api_key: this.defaults.api_key };
  }

  get(settings: EmbedderSettings): Embedder {
    const key = JSON.stringify([settings.provider, settings.url, settings.model, settings.query_prefix, settings.document_prefix]);
    let embedder = this.made.get(key);
    if (!embedder) {
      embedder = this.make(settings);
      this.made.set(key, embedder);
    }
    return embedder;
  }

  private make(s: EmbedderSettings): Embedder {
    switch (s.provider) {
      case 'builtin':
        return new LazyBuiltin(this.wordsFile);
      case 'openai':
        if (!s.url) throw new Error('the openai embedder needs a URL (SVC_EMBEDDER_URL or semantic_config.embedder.url)');
        return new OpenAIEmbedder({ ...this.openaiOptions, url: s.url, model: s.model ?? 'text-embedding-3-small', apiKey: s.api_key });
      case 'onnx':
        if (!s.model) throw new Error('the onnx embedder needs a model directory (SVC_EMBEDDER_MODEL or semantic_config.embedder.model)');
        return new OnnxEmbedder({ ...this.onnxOptions, model: s.model, queryPrefix: s.query_prefix, documentPrefix: s.document_prefix });
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A tiny sentence-transformers export, built here so tests and benchmarks can run svc's real onnx
 * loading and inference without downloading a model: an ONNX graph whose "encoder" is one Gather
 * over a small embedding table (token vectors = table rows), a WordPiece tokenizer.json of a few
 * dozen words with [CLS]/[SEP], and the pooling config and modules.json beside them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';

/** The few messages of onnx.proto a model needs, with their field numbers there. */
const ONNX = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            ir_version: { id: 1, type: 'int64' },
            producer_name: { id: 2, type: 'string' },
            graph: { id: 7, type: 'GraphProto' },
            opset_import: { id: 8, type: 'OperatorSetIdProto', rule: 'repeated' },
          },
        },
        OperatorSetIdProto: { fields: { domain: { id: 1, type: 'string' }, version: { id: 2, type: 'int64' } } },
        GraphProto: {
          fields: {
            node: { id: 1, type: 'NodeProto', rule: 'repeated' },
            name: { id: 2, type: 'string' },
            initializer: { id: 5, type: 'TensorProto', rule: 'repeated' },
            input: { id: 11, type: 'ValueInfoProto', rule: 'repeated' },
            output: { id: 12, type: 'ValueInfoProto', rule: 'repeated' },
          },
        },
        NodeProto: {
          fields: {
            input: { id: 1, type: 'string', rule: 'repeated' },
            output: { id: 2, type: 'string', rule: 'repeated' },
            name: { id: 3, type: 'string' },
            op_type: { id: 4, type: 'string' },
            attribute: { id: 5, type: 'AttributeProto', rule: 'repeated' },
          },
        },
        AttributeProto: {
          fields: { name: { id: 1, type: 'string' }, i: { id: 3, type: 'int64' }, ints: { id: 8, type: 'int64', rule: 'repeated' }, type: { id: 20, type: 'int32' } },
        },
        TensorProto: {
          fields: {
            dims: { id: 1, type: 'int64', rule: 'repeated' },
            data_type: { id: 2, type: 'int32' },
            name: { id: 8, type: 'string' },
            raw_data: { id: 9, type: 'bytes' },
          },
        },
        ValueInfoProto: { fields: { name: { id: 1, type: 'string' }, type: { id: 2, type: 'TypeProto' } } },
        TypeProto: {
          fields: { tensor_type: { id: 1, type: 'Tensor' } },
          nested: { Tensor: { fields: { elem_type: { id: 1, type: 'int32' }, shape: { id: 2, type: 'TensorShapeProto' } } } },
        },
        TensorShapeProto: {
          fields: { dim: { id: 1, type: 'Dimension', rule: 'repeated' } },
          nested: { Dimension: { fields: { dim_value: { id: 1, type: 'int64' }, dim_param: { id: 2, type: 'string' } } } },
        },
      },
    },
  },
});

const FLOAT = 1;
const INT64 = 7;
const ATTR_INT = 2;
const ATTR_INTS = 7;

/** Words of the tokenizer, by id: four special tokens first, as BERT has them. */
export const VOCAB = [
  '[PAD]', '[UNK]', '[CLS]', '[SEP]',
  'disk', 'pressure', 'warning', 'node', 'memory', 'cache', 'service', 'report', 'zebra', '##fish',
  'heart', 'attack', 'patient', 'stock', 'market', 'price', 'the', 'a', 'of', 'in', 'is',
  'query', 'passage', ':', '.', 'cat', 'dog', 'network',
];
export const CLS = 2;
export const SEP = 3;

/** Row `v` of the embedding table, deterministic: a one-hot of the token (when dims allow) plus a smaller shared wave. */
export function tableRow(v: number, dims: number): Float32Array {
  return Float32Array.from({ length: dims }, (_, d) => 0.3 * Math.sin(v * 1.7 + d * 0.9) + (d === v % dims ? 1 : 0));
}

export interface TinyModel {
  dir: string;
  dims: number;
  /** the table the model holds: row v is token v's vector */
  row: (v: number) => Float32Array;
  /** the ids the tokenizer gives a text, [CLS] and [SEP] included (lower-cased words, one per id) */
  ids: (text: string) => number[];
}

export interface TinyModelOptions {
  dims?: number;
  pooling?: 'mean' | 'cls';
  /** list a 2_Normalize module in modules.json */
  normalize?: boolean;
  /** rows of the model's table: fewer than the vocabulary makes a tokenizer that does not fit */
  rows?: number;
  /** the model also takes token_type_ids (as BERT does) */
  tokenTypes?: boolean;
  /** the model pools itself: its only output is `sentence_embedding` [batch, dims] (a plain mean over tokens) */
  pooled?: boolean;
  /** where model.onnx goes inside the directory ('onnx/model.onnx' as Hugging Face exports put it) */
  modelPath?: string;
  /** tokenizer_config.json's model_max_length */
  maxLength?: number;
  /** words added to the vocabulary after VOCAB (a benchmark's realistic tokenizer) */
  words?: string[];
}

/** Writes the model directory; returns what a test needs to compute expected vectors. */
export function writeTinyModel(dir: string, o: TinyModelOptions = {}): TinyModel {
  const dims = o.dims ?? 8;
  const vocab = [...new Set([...VOCAB, ...(o.words ?? [])])];
  const rows = o.rows ?? vocab.length;
  mkdirSync(join(dir, '1_Pooling'), { recursive: true });
  const modelFile = join(dir, o.modelPath ?? 'model.onnx');
  mkdirSync(join(modelFile, '..'), { recursive: true });
  writeFileSync(modelFile, modelBytes(dims, rows, o));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: true, model_max_length: o.maxLength ?? 512, tokenizer_class: 'BertTokenizer' }));
  const pooling = o.pooling ?? 'mean';
  writeFileSync(join(dir, '1_Pooling', 'config.json'), JSON.stringify({ word_embedding_dimension: dims, pooling_mode_cls_token: pooling === 'cls', pooling_mode_mean_tokens: pooling === 'mean', pooling_mode_max_tokens: false }));
  const modules = [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ...(o.normalize ? [{ idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' }] : []),
  ];
  writeFileSync(join(dir, 'modules.json'), JSON.stringify(modules));
  const index = new Map(vocab.map((w, i) => [w, i]));
  return {
    dir,
    dims,
    row: (v) => tableRow(v, dims),
    ids: (text) => [CLS, ...text.toLowerCase().split(/\s+/).filter(Boolean).map((w) => index.get(w) ?? 1), SEP],
  };
}

/** model.onnx: input_ids → Gather over the table → last_hidden_state (or, pooled, ReduceMean → sentence_embedding). */
export function modelBytes(dims: number, rows: number, o: Pick<TinyModelOptions, 'tokenTypes' | 'pooled'> = {}): Uint8Array {
  const table = new Float32Array(rows * dims);
  for (let v = 0; v < rows; v++) table.set(tableRow(v, dims), v * dims);
  const dim = (d: number | string) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d });
  const value = (name: string, elem: number, shape: (number | string)[]) => ({ name, type: { tensor_type: { elem_type: elem, shape: { dim: shape.map(dim) } } } });
  const inputs = ['input_ids', 'attention_mask', ...(o.tokenTypes ? ['token_type_ids'] : [])].map((n) => value(n, INT64, ['batch', 'seq']));
  const nodes = [{ name: 'embed', op_type: 'Gather', input: ['table', 'input_ids'], output: ['last_hidden_state'], attribute: [{ name: 'axis', type: ATTR_INT, i: 0 }] }];
  let output = value('last_hidden_state', FLOAT, ['batch', 'seq', dims]);
  if (o.pooled) {
    nodes.push({ name: 'pool', op_type: 'ReduceMean', input: ['last_hidden_state'], output: ['sentence_embedding'], attribute: [{ name: 'axes', type: ATTR_INTS, ints: [1] } as never, { name: 'keepdims', type: ATTR_INT, i: 0 }] });
    output = value('sentence_embedding', FLOAT, ['batch', dims]);
  }
  const Model = ONNX.lookupType('onnx.ModelProto');
  const model = {
    ir_version: 8,
    producer_name: 'svc-test',
    opset_import: [{ domain: '', version: 13 }],
    // raw_data is little-endian, as Float32Array is on every machine svc builds for
    graph: { name: 'tiny', node: nodes, initializer: [{ name: 'table', data_type: FLOAT, dims: [rows, dims], raw_data: new Uint8Array(table.buffer) }], input: inputs, output: [output] },
  };
  return Model.encode(Model.fromObject(model)).finish();
}

/** A BERT-style WordPiece tokenizer.json over `vocab`: lower-cases, splits on spaces and punctuation, adds [CLS] … [SEP]. */
export function tokenizerJson(vocab: string[] = VOCAB): object {
  const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const token = (id: string) => ({ id, ids: [VOCAB.indexOf(id)], tokens: [id] });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map((t) => special(t, VOCAB.indexOf(t))),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': token('[CLS]'), '[SEP]': token('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(vocab.map((w, i) => [w, i])) },
  };
}

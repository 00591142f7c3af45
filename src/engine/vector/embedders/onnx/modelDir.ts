import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** How token vectors become one text vector (sentence-transformers' 1_Pooling/config.json). */
export type Pooling = 'mean' | 'cls';

/** A sentence-transformers export on disk, as svc reads it. */
export interface ModelDir {
  dir: string;
  /** model.onnx (or model_quantized.onnx), in the dir or its onnx/ folder as Hugging Face exports put it */
  modelFile: string;
  tokenizerFile: string;
  tokenizerConfigFile: string | null;
  pooling: Pooling;
  /** tokens per text, special ones included: longer texts are cut */
  maxLength: number;
}

/** The model directory or its files are missing or not what svc can use: fixing them on disk is the cure. */
export class OnnxModelError extends Error {}

/** BERT-style encoders are built for 512 positions; a model that says fewer gets fewer. */
const DEFAULT_MAX_LENGTH = 512;
const MODEL_FILES = ['model.onnx', 'onnx/model.onnx', 'model_quantized.onnx', 'onnx/model_quantized.onnx'];

/**
 * Finds what a model directory holds, with checks cheap enough for start-up (files exist, small
 * JSON files parse); the model itself is first read by the worker. `path` may also name a `.onnx`
 * file: its directory is then the model directory.
 */
export function readModelDir(path: string): ModelDir {
  const given = resolve(path);
  const fail = (why: string) => new OnnxModelError(`onnx model '${given}': ${why}`);
  const isFile = given.endsWith('.onnx');
  const dir = isFile ? dirname(given) : given;
  if (!isDirectory(dir)) throw fail('no such directory');
  const modelFile = isFile ? given : MODEL_FILES.map((f) => join(dir, f)).find(existsSync);
  if (!modelFile || !existsSync(modelFile)) throw fail(`no ${MODEL_FILES.join(', ')} in it`);
  const tokenizerFile = [join(dir, 'tokenizer.json'), join(dirname(modelFile), 'tokenizer.json')].find(existsSync);
  if (!tokenizerFile) throw fail('no tokenizer.json in it (export the model with its fast tokenizer)');
  const tokenizerConfigFile = [join(dir, 'tokenizer_config.json'), join(dirname(tokenizerFile), 'tokenizer_config.json')].find(existsSync) ?? null;
  const json = (file: string): Record<string, unknown> => {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw fail(`${basename(file)} is not JSON: ${(err as Error).message}`);
    }
  };
  const lengths = [DEFAULT_MAX_LENGTH];
  if (tokenizerConfigFile) lengths.push(Number(json(tokenizerConfigFile).model_max_length)); // some say 1e30: "no limit"
  const sbert = join(dir, 'sentence_bert_config.json');
  if (existsSync(sbert)) lengths.push(Number(json(sbert).max_seq_length)); // what sentence-transformers itself cuts at
  const maxLength = Math.min(...lengths.filter((n) => Number.isInteger(n) && n >= 2));
  return { dir, modelFile, tokenizerFile, tokenizerConfigFile, pooling: pooling(dir, json, fail), maxLength };
}

/** The pooling module named in modules.json (else 1_Pooling); mean when the export has none, as most sentence embedders pool. */
function pooling(dir: string, json: (file: string) => Record<string, unknown>, fail: (why: string) => Error): Pooling {
  let folder = '1_Pooling';
  const modulesFile = join(dir, 'modules.json');
  if (existsSync(modulesFile)) {
    const modules = json(modulesFile) as unknown as { type?: string; path?: string }[];
    const found = Array.isArray(modules) ? modules.find((m) => m.type?.endsWith('.Pooling')) : undefined;
    if (found?.path) folder = found.path;
  }
  const configFile = join(dir, folder, 'config.json');
  if (!existsSync(configFile)) return 'mean';
  const c = json(configFile);
  const modes = Object.keys(c).filter((k) => k.startsWith('pooling_mode_') && c[k] === true);
  if (modes.length === 1 && modes[0] === 'pooling_mode_cls_token') return 'cls';
  if (modes.length === 1 && modes[0] === 'pooling_mode_mean_tokens') return 'mean';
  throw fail(`${folder}/config.json asks for pooling ${modes.join(' + ') || 'none'}; svc pools by CLS token or by mean`);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const hashes = new Map<string, string>();

/**
 * SHA-1 of the model's and tokenizer's bytes, first 12 hex digits: another model (or a changed
 * tokenizer) is another vector space. Read in chunks, once per file version in this process; a
 * model of 130 MB takes a few hundred milliseconds, paid when its embedder is first made.
 */
export function modelHash(m: ModelDir): string {
  const key = [m.modelFile, m.tokenizerFile].map((f) => `${f}:${statSync(f).size}:${statSync(f).mtimeMs}`).join('|');
  let hash = hashes.get(key);
  if (!hash) {
    const h = createHash('sha1');
    for (const file of [m.modelFile, m.tokenizerFile]) hashFile(h, file);
    hash = h.digest('hex').slice(0, 12);
    hashes.set(key, hash);
  }
  return hash;
}

function hashFile(h: ReturnType<typeof createHash>, file: string): void {
  const buf = Buffer.allocUnsafe(8 * 2 ** 20);
  const fd = openSync(file, 'r');
  try {
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

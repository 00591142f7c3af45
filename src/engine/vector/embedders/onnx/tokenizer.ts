/** A model's tokenizer.json as svc uses it: text → ids, special tokens added, cut at the model's length. */
export interface TextTokenizer {
  encode(text: string): number[];
  /** the largest id the tokenizer can give */
  maxId: number;
  /** what fills the rest of a shorter text's row in a batch (the attention mask hides it) */
  padId: number;
}

/**
 * Characters tokenised per text at most: far more than `maxLength` tokens take (a token is a few
 * characters), so nothing kept is lost, and a long text costs no more than a long enough one.
 */
const CHARS_PER_TOKEN = 16;

export async function loadTokenizer(tokenizerJson: string, configJson: string | null, maxLength: number): Promise<TextTokenizer> {
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const json = JSON.parse(tokenizerJson);
  const tokenizer = new Tokenizer(json, configJson ? JSON.parse(configJson) : {});
  const vocab = tokenizer.get_vocab(true);
  if (vocab.size === 0) throw new Error('its vocabulary is empty');
  const maxId = Math.max(...vocab.values());
  const padToken = json.padding?.pad_token ?? ['[PAD]', '<pad>'].find((t) => vocab.has(t));
  const padId = json.padding?.pad_id ?? (padToken !== undefined ? vocab.get(padToken) : undefined) ?? 0;

  // how many special tokens the post-processor puts before and after a text ([CLS] … [SEP], <s> … </s>):
  // a cut text keeps both ends, as the tokenizers library truncates
  const plain: number[] = tokenizer.encode('a', { add_special_tokens: false }).ids;
  const full: number[] = tokenizer.encode('a').ids;
  let head = 0;
  while (head + plain.length <= full.length && plain.some((id, i) => full[head + i] !== id)) head++;
  if (head + plain.length > full.length) head = 0; // no special tokens found around the text: nothing to keep
  const tail = head + plain.length <= full.length ? full.length - head - plain.length : 0;
  if (head + tail >= maxLength) throw new Error(`it adds ${head + tail} special tokens to texts of at most ${maxLength}`);

  return {
    maxId,
    padId,
    encode(text: string): number[] {
      const ids = tokenizer.encode(text.slice(0, maxLength * CHARS_PER_TOKEN)).ids;
      return ids.length <= maxLength ? ids : [...ids.slice(0, maxLength - tail), ...ids.slice(ids.length - tail)];
    },
  };
}

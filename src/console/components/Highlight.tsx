// A snippet from the API: its text is HTML-escaped with <em> around matched words. Nothing is
// inserted as HTML: the text is split on the <em> tags, its entities decoded, and rendered as text
// nodes, with <mark> elements where the <em> spans were.
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'" };
const decode = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39|#x27);/g, (e) => ENTITIES[e]);

export function Highlight({ html, testid }: { html: string; testid?: string }) {
  const parts = html.split(/<em>([\s\S]*?)<\/em>/);
  return (
    <span class="snippet" data-testid={testid}>
      {parts.map((p, i) => (i % 2 === 1 ? <mark key={i}>{decode(p)}</mark> : decode(p.replace(/<\/?em>/g, ''))))}
    </span>
  );
}

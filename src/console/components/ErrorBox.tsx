// An error as the API gave it, kept verbatim (multi-line validation issues included).
export function ErrorBox({ error, testid }: { error: string | null; testid?: string }) {
  if (!error) return null;
  return (
    <pre class="error" role="alert" data-testid={testid}>
      {error}
    </pre>
  );
}

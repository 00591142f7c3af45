// A plain data table with a caption for screen readers.
import type { ComponentChildren } from 'preact';

export function Table({ caption, head, children, testid }: { caption: string; head: string[]; children: ComponentChildren; testid?: string }) {
  return (
    <div class="table-wrap">
      <table data-testid={testid}>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** Splits one CSV line with RFC 4180 quoting (the shipped structured samples have no multi-line cells). */
export function csvCells(line: string): string[] {
  const cells: string[] = [];
  const re = /("(?:[^"]|"")*"|[^,]*)(,|$)/gy;
  for (let m = re.exec(line); m !== null && m.index < line.length; m = re.exec(line)) {
    cells.push(m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!);
    if (m[2] === '') break;
  }
  return cells;
}

import { Option, type Command } from 'commander';

/** `--fields a,b,metadata.Level` (or `--columns`): the columns of a table or CSV, dotted paths into each row. */
export const addFieldsFlag = (cmd: Command): Command =>
  cmd
    .option('--fields <paths>', 'table and csv: these columns, comma-separated dotted paths into each row (e.g. id,metadata.Level)')
    .addOption(new Option('--columns <paths>', 'same as --fields').hideHelp());

/** The columns asked for, if any. */
export function fieldsOf(cmd: Command): string[] | undefined {
  const { fields, columns } = cmd.opts<{ fields?: string; columns?: string }>();
  const list = (fields ?? columns)?.split(',').map((f) => f.trim()).filter(Boolean);
  return list?.length ? list : undefined;
}

import type { Command } from 'commander';

/** A command's path from the top (without `svc`), each step in every spelling it has (name and aliases). */
interface Node { spellings: string[][]; subcommands: string[]; flags: string[] }

const flagsOf = (cmd: Command): string[] =>
  cmd.options.filter((o) => !o.hidden).flatMap((o) => [o.short, o.long].filter((f): f is string => Boolean(f))).concat('--help');

function nodes(cmd: Command, spellings: string[][] = [[]], out: Node[] = []): Node[] {
  out.push({ spellings, subcommands: cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]), flags: flagsOf(cmd) });
  for (const sub of cmd.commands) {
    const names = [sub.name(), ...sub.aliases()];
    nodes(sub, spellings.flatMap((p) => names.map((n) => [...p, n])), out);
  }
  return out;
}

const words = (list: string[]) => [...new Set(list)].join(' ');

/**
 * bash: one case per command path, giving its subcommands and flags (the global ones everywhere,
 * since svc reads them wherever they stand); words that are neither a flag nor a subcommand (values,
 * arguments) do not move the path.
 */
export function bashCompletion(program: Command): string {
  const all = nodes(program);
  const globals = flagsOf(program);
  const cases = (pick: (n: Node) => string) =>
    all.map((n) => `    ${n.spellings.map((p) => `"${p.join(' ')}"`).join('|')}) echo "${pick(n)}" ;;`).join('\n');
  return `# svc completion for bash: source <(svc completion bash)
_svc_subcommands() {
  case "$1" in
${cases((n) => words(n.subcommands))}
  esac
}
_svc_words() {
  case "$1" in
${cases((n) => words([...n.subcommands, ...n.flags, ...globals]))}
  esac
}
_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case " $(_svc_subcommands "$path") " in
      *" $w "*) path="\${path:+$path }$w" ;;
    esac
  done
  COMPREPLY=($(compgen -W "$(_svc_words "$path")" -- "$cur"))
}
complete -F _svc svc
`;
}

/** zsh runs the bash script through its own bashcompinit. */
export const zshCompletion = (program: Command): string =>
  `# svc completion for zsh: source <(svc completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split('\n').slice(1).join('\n')}`;

/** fish: subcommands where their parent has been typed, and each command's flags after it. */
export function fishCompletion(program: Command): string {
  const lines = ['# svc completion for fish: svc completion fish | source'];
  for (const n of nodes(program)) {
    const path = n.spellings[0];
    const after = path.length === 0 ? '__fish_use_subcommand' : path.map((p) => `__fish_seen_subcommand_from ${p}`).join('; and ');
    const subs = n.subcommands.length ? [`complete -c svc -n '${after}' -a '${words(n.subcommands)}'`] : [];
    const flags = n.flags.map((f) => `complete -c svc -n '${path.length === 0 ? 'true' : after}' ${f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`}`);
    lines.push(...subs, ...flags);
  }
  return lines.join('\n') + '\n';
}

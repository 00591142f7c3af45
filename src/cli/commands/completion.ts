import { Argument, type Command } from 'commander';
import { bashCompletion, fishCompletion, zshCompletion } from '../completion.js';

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion };

export function completionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for svc: its commands, subcommands and flags')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SHELLS)))
    .addHelpText('after', '\nExamples:\n  source <(svc completion bash)          # in ~/.bashrc\n  source <(svc completion zsh)           # in ~/.zshrc\n  svc completion fish > ~/.config/fish/completions/svc.fish')
    .action((shell: keyof typeof SHELLS) => {
      process.stdout.write(SHELLS[shell](program));
    });
}

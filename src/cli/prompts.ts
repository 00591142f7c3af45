/** Prompts load only when a command asks something on a terminal: they cost start-up time otherwise. */
export const prompts = () => import('@inquirer/prompts');

/**
 * How the person started the front, for the hints it prints: `./sandbox` in a checkout, `npx sandbox` where the
 * toolkit is an installed package (a consumer has no `./sandbox`). `SANDBOX_FRONT_COMMAND` names another wrapper.
 */
let command = "./sandbox";

/** Sets the wording once, from where the running toolkit's files are. */
export function setFrontCommand(installed: boolean, env: NodeJS.ProcessEnv = process.env): void {
  const named = env.SANDBOX_FRONT_COMMAND?.trim();
  command = named !== undefined && named !== "" ? named : installed ? "npx sandbox" : "./sandbox";
}

/** The command a hint names. */
export function frontCommand(): string {
  return command;
}

/** A message's hints worded the way this front was started (`./sandbox up dev` → `npx sandbox up dev`). */
export function asStarted(text: string): string {
  return command === "./sandbox" ? text : text.replaceAll("./sandbox ", `${command} `);
}

/**
 * The engine's work as a person watches it: one line per object when its step is done (`created web (docker
 * Container)`), and on a terminal a live line, with a spinner, naming the objects being worked on now. Off a terminal
 * (a CI log, a pipe) only the done lines are written, so a log holds no control characters.
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR = "\r\x1b[2K";

export class ProgressLines {
  private readonly working = new Map<string, string>();
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private shown = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly terminal: boolean,
  ) {}

  /** An object's step started: `doing` says what (`creating web (docker Container)`). */
  start(key: string, doing: string): void {
    if (!this.terminal) return;
    this.working.set(key, doing);
    this.draw();
    this.timer ??= setInterval(() => this.draw(), 100).unref();
  }

  /** An object's step ended (`line` is its done line), or any line to keep above the live one. */
  line(text: string, key?: string): void {
    if (key !== undefined) this.working.delete(key);
    this.clear();
    this.write(text.endsWith("\n") ? text : `${text}\n`);
    if (this.working.size > 0) this.draw();
    else this.stop();
  }

  /** An object's step ended without a line of its own. */
  end(key: string): void {
    this.working.delete(key);
    this.clear();
    if (this.working.size > 0) this.draw();
    else this.stop();
  }

  /** Clears the live line and stops the spinner (the run ended). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.working.clear();
    this.clear();
  }

  private clear(): void {
    if (this.shown) this.write(CLEAR);
    this.shown = false;
  }

  private draw(): void {
    if (this.working.size === 0) return;
    // The latest step started: a component stays open while its children are worked on.
    const latest = [...this.working.values()].at(-1) ?? "";
    const more = this.working.size > 1 ? ` (+${this.working.size - 1} more)` : "";
    this.frame = (this.frame + 1) % FRAMES.length;
    this.write(`${CLEAR}${FRAMES[this.frame]} ${latest}…${more}`);
    this.shown = true;
  }
}

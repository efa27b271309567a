/**
 * The sentences of a reply while it is written (issue 44, the LLM runtime's tokens): text goes in as
 * it streams, each sentence comes out as soon as it is complete (its end mark followed by a space or a
 * line break), the rest when the reply ends. A streamed call speaks each one while the model writes
 * the next.
 */
export class SentenceQueue implements AsyncIterable<string> {
  private buffer = '';
  private ready: string[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  /** A piece of the reply's text, as the runtime hands it over. */
  push(delta: string): void {
    if (this.ended) return;
    this.buffer += delta;
    // Everything up to the last complete sentence's end (a dot inside "www.acme.com" or "3.5" is followed by no space).
    const boundary = /(?:[.!?…]+["')\]]*\s+|\n+)/g;
    let cut = 0;
    for (let m = boundary.exec(this.buffer); m; m = boundary.exec(this.buffer)) {
      const sentence = this.buffer.slice(cut, m.index + m[0].length).trim();
      if (sentence) this.ready.push(sentence);
      cut = m.index + m[0].length;
    }
    this.buffer = this.buffer.slice(cut);
    this.notify();
  }

  /** The reply is over: what is left is its last sentence. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const rest = this.buffer.trim();
    this.buffer = '';
    if (rest) this.ready.push(rest);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.ready.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }
}

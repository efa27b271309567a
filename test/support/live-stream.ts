/** One event of the live stream (`GET /conversations/live/stream`). */
export interface LiveFrame { id: string; event: string; data: any }

/**
 * Reads the live stream as it comes: `next(match)` waits for the first frame not yet taken that
 * matches (waiting for the event itself, never for a while); `close()` ends the stream.
 */
export async function watchLiveStream(baseUrl: string, token: string) {
  const ctrl = new AbortController();
  const res = await fetch(`${baseUrl}/api/v1/rest/conversations/live/stream`, { headers: { authorization: `Bearer ${token}` }, signal: ctrl.signal });
  if (res.status !== 200) throw new Error(`the live stream answered ${res.status}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: LiveFrame[] = [];
  const taken = new Set<LiveFrame>();
  let buffer = '';
  const parse = () => {
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop()!;
    for (const block of blocks) {
      const lines = block.split('\n').filter((l) => l && !l.startsWith(':'));
      const fields = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      if (fields.event) frames.push({ id: fields.id!, event: fields.event, data: JSON.parse(fields.data!) });
    }
  };
  return {
    frames,
    async next(match: (f: LiveFrame) => boolean): Promise<LiveFrame> {
      for (;;) {
        const found = frames.find((f) => !taken.has(f) && match(f));
        if (found) {
          taken.add(found);
          return found;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the live stream ended before the event came');
        buffer += decoder.decode(value, { stream: true });
        parse();
      }
    },
    close() { ctrl.abort(); },
  };
}

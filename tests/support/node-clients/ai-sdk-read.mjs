// Read an AI SDK UI message stream over HTTP the way `useChat` does: DefaultChatTransport
// (fetch + uiMessageChunkSchema validation of every chunk) into readUIMessageStream, which
// rebuilds the assistant message. Usage: node ai-sdk-read.mjs URL ; prints
// {message, errors, errorChunks, chunkTypes, snapshots} as JSON (message = the last snapshot;
// errors = what readUIMessageStream reported, errorChunks = the stream's own `error` chunks).
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const transport = new DefaultChatTransport({ api: process.argv[2] });
const validated = await transport.sendMessages({
  chatId: 'boo-normalize-test',
  messages: [],
  trigger: 'submit-message',
  messageId: undefined,
  abortSignal: undefined,
});
const [stream, tap] = validated.tee();
const chunkTypes = [];
const errorChunks = [];
const tapped = (async () => {
  for await (const c of tap) {
    chunkTypes.push(c.type);
    if (c.type === 'error') errorChunks.push(c.errorText);
  }
})();
const errors = [];
let message = null;
let snapshots = 0;
for await (const m of readUIMessageStream({
  stream,
  terminateOnError: false,
  onError: (e) => errors.push(String(e?.message ?? e)),
})) {
  message = m;
  snapshots++;
}
await tapped;
process.stdout.write(JSON.stringify({ message, errors, errorChunks, chunkTypes, snapshots }));

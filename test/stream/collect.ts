// Test helper: runs bytes through ChatStreamParser and MessageAssembler in chosen pieces and collects the outcome.

import { ChatStreamParser, MessageAssembler, type AssembledMessage, type StreamEvent } from '../../src/stream/index.js';

export interface Outcome {
  events: StreamEvent[];
  message: AssembledMessage;
  dataEvents: number;
  bytes: number;
}

/** Feeds `pieces` in order, then ends the body. */
export function runPieces(pieces: readonly Uint8Array[]): Outcome {
  const events: StreamEvent[] = [];
  const assembler = new MessageAssembler();
  const parser = new ChatStreamParser((e) => {
    events.push(e);
    assembler.apply(e);
  });
  for (const piece of pieces) parser.feed(piece);
  parser.end();
  return { events, message: assembler.result(), dataEvents: parser.dataEvents, bytes: parser.bytes };
}

export function runWhole(body: string | Uint8Array): Outcome {
  return runPieces([typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** Two pieces: bytes [0, offset) and [offset, end). */
export function runSplitAt(bytes: Uint8Array, offset: number): Outcome {
  return runPieces([bytes.subarray(0, offset), bytes.subarray(offset)]);
}

export function runByteByByte(bytes: Uint8Array): Outcome {
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i++) pieces.push(bytes.subarray(i, i + 1));
  return runPieces(pieces);
}

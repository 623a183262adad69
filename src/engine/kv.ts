// The KV-cache hand-off between the PD servers: the bootstrap rendezvous by room (what SGLang's bootstrap
// server and transfer engine do), and how long a transfer takes. The router puts the same `bootstrap_room` in
// the request it sends to both servers; whichever arrives first opens the room. The decode side says when it has
// preallocated KV (the prefill's bootstrap ends), the prefill side when the KV has arrived, either side that
// it failed (the other then fails too, with the reason).
import type { EngineSettings } from '../config/index.js';

/** Bytes of KV cache per token assumed for the transfer time (a DeepSeek-class MLA model, order of magnitude). */
export const KV_BYTES_PER_TOKEN = 64 * 1024;

/** Time to move a prompt's KV from prefill to decode: the fixed part plus its size over the bandwidth. */
export function kvTransferMs(settings: EngineSettings, promptTokens: number): number {
  const gbps = settings.kv_transfer_gbps;
  const sizeMs = gbps === null ? 0 : ((promptTokens * KV_BYTES_PER_TOKEN * 8) / (gbps * 1e9)) * 1000;
  return settings.kv_transfer_ms + sizeMs;
}

type Listener = () => void;

export class KvRoom {
  #decodeReady = false;
  #transferred = false;
  #failure: string | null = null;
  #onReady: Listener[] = [];
  #onTransferred: Listener[] = [];
  #onFailed: ((reason: string) => void)[] = [];
  /** Prompt tokens the prefill found cached, for the decode side's usage. */
  cachedTokens = 0;
  /** Sides still holding the room (2 when both arrived); at 0 the fabric forgets it. */
  holders = 0;

  constructor(readonly id: number) {}

  get failure(): string | null {
    return this.#failure;
  }

  /** Decode: KV preallocated, the indices sent to prefill. */
  decodeReady(): void {
    if (this.#decodeReady || this.#failure !== null) return;
    this.#decodeReady = true;
    for (const l of this.#take('ready')) l();
  }

  /** Prefill: the KV has arrived at decode. */
  transferred(): void {
    if (this.#transferred || this.#failure !== null) return;
    this.#transferred = true;
    for (const l of this.#take('transferred')) l();
  }

  /** Either side: the transfer failed; the other side hears the reason. */
  fail(reason: string): void {
    if (this.#failure !== null || this.#transferred) return;
    this.#failure = reason;
    const listeners = this.#onFailed;
    this.#onFailed = [];
    this.#onReady = [];
    this.#onTransferred = [];
    for (const l of listeners) l(reason);
  }

  whenDecodeReady(l: Listener): void {
    if (this.#decodeReady) l();
    else this.#onReady.push(l);
  }

  whenTransferred(l: Listener): void {
    if (this.#transferred) l();
    else this.#onTransferred.push(l);
  }

  whenFailed(l: (reason: string) => void): void {
    if (this.#failure !== null) l(this.#failure);
    else this.#onFailed.push(l);
  }

  #take(which: 'ready' | 'transferred'): Listener[] {
    const out = which === 'ready' ? this.#onReady : this.#onTransferred;
    if (which === 'ready') this.#onReady = [];
    else this.#onTransferred = [];
    return out;
  }
}

/** The rooms of one deployment. A side opens (or joins) a room when its request arrives and leaves it when the
 * request is over; a room both sides left is forgotten. */
export class KvFabric {
  readonly #rooms = new Map<number, KvRoom>();

  join(id: number): KvRoom {
    let room = this.#rooms.get(id);
    if (room === undefined) {
      room = new KvRoom(id);
      this.#rooms.set(id, room);
    }
    room.holders += 1;
    return room;
  }

  leave(room: KvRoom): void {
    room.holders -= 1;
    if (room.holders <= 0) this.#rooms.delete(room.id);
  }

  get size(): number {
    return this.#rooms.size;
  }
}

/** Tokens of KV cache each embedded server pretends to have (for `token_usage` and admission). */
export const KV_CAPACITY_TOKENS = 1_048_576;

/** SGLang's KVTransferError text, as its failure messages carry it. */
export function kvTransferError(room: number, reason: string): string {
  return `KVTransferError(bootstrap_room=${room}): ${reason}`;
}

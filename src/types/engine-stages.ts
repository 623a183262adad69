// The stages of a request in the embedded engine's traces (`--enable-trace`), declared once: a stage span is
// named as SGLang's own request tracing names it (its RequestStage list: prefill_waiting, prefill_bootstrap,
// prefill_forward, prefill_transfer_kv_cache, decode_waiting, decode_forward…), so a trace of the embedded
// engine reads as one of SGLang's in Jaeger or Tempo; the router's two are the embedded router's own. Each
// stage says where the request is in words, for the diagnosis's sentence. No runtime dependencies.

export const ENGINE_STAGES = {
  router_wait: "the router's admission queue",
  router_dispatch: "the router's dispatch to prefill and decode, until the answer ends",
  prefill_waiting: "the server's waiting queue, before its prefill",
  prefill_bootstrap: "the prefill server's bootstrap and waiting queues: waiting for decode's preallocation, then its turn",
  prefill_forward: 'the prefill forward pass',
  prefill_transfer_kv_cache: 'the KV cache transfer from prefill to decode',
  decode_waiting: "the decode server's prealloc and transfer queues: waiting for its KV",
  decode_forward: 'decoding: the answer streaming',
} as const satisfies Record<string, string>;

export type EngineStage = keyof typeof ENGINE_STAGES;

/** What stage `name` is, in words, or null for a name that is not one of the engine's. */
export function engineStageMeaning(name: string): string | null {
  return Object.hasOwn(ENGINE_STAGES, name) ? ENGINE_STAGES[name as EngineStage] : null;
}

// Types of @embd/embd (src/embd.js, src/stream.js).

export type Dtype = 'f32' | 'f16' | 'bf16' | 'fp8_e4m3' | 'fp8_e5m2' | 'int8' | 'uint8' | 'binary' | 'ubinary';
export type ByteOrder = 'little' | 'big';
export type Bytes = ArrayBuffer | ArrayBufferView;

export declare const DTYPES: readonly Dtype[];

/** Codec session frame types. */
export declare const FRAME: { HELLO: 0; READY: 1; TOKENS: 2; EOS: 3; ERROR: 4; LATENT_HEADER: 5; LATENTS: 6 };
export interface CodecFrame {
  /** the type byte (0x07 and up: a newer type, handed over opaque) */
  type: number;
  typeName: string;
  /** byte offset of the frame's type byte */
  offset: number;
  payload: Uint8Array;
  /** TOKENS frames from decodeFrameStream: the ids */
  ids?: Uint32Array;
  /** HELLO / READY frames from decodeFrames: the payload's JSON as an object, checked by
   * the C parser when read (a fault throws EmbeddingCodecError, code CODEC_HANDSHAKE) */
  readonly message?: Record<string, unknown>;
}

export type TokenKind = 'text' | 'byte' | 'special' | 'bytes';
export interface DetokenizerOptions {
  /** special tokens give no text (default: their text) */
  skipSpecial?: boolean;
  /** an id the map does not know is U+FFFD (default: an UNKNOWN_TOKEN error) */
  replaceUnknown?: boolean;
}
/** A tokenizer map in the module's memory until free() (dropped without it: when the
 * garbage collector takes it, through a FinalizationRegistry; free() is the way to release
 * at once). */
export declare class TokenizerMap {
  /** "sha256:<64 lowercase hex>" of the map's bytes */
  readonly hash: string;
  readonly id: string;
  readonly version: string;
  /** "0.1", "2" or "2.1" */
  readonly schema: string;
  readonly vocabSize: number;
  readonly tokenCount: number;
  readonly specialCount: number;
  lookup(id: number): { bytes: Uint8Array; kind: TokenKind } | null;
  detokenize(ids: Uint32Array | number[], options?: DetokenizerOptions): string;
  /** partial (default true): an incomplete UTF-8 sequence at a feed's end waits for the next */
  detokenizer(options?: DetokenizerOptions & { partial?: boolean }): Detokenizer;
  /** Releases the map now, its detokenizers first (they throw afterwards); idempotent. */
  free(): void;
}
/** One token stream's detokenizer; it keeps its map alive. Released by free(), or by the
 * garbage collector once dropped. */
export declare class Detokenizer {
  feed(ids: Uint32Array | number[]): string;
  finish(): string;
  reset(): void;
  readonly pending: number;
  /** Releases it now; idempotent. */
  free(): void;
}

export declare class EmbeddingCodecError extends Error {
  constructor(message: string, code?: string, offset?: number, result?: number);
  /** The C library's result name without EMBD_ERR_: 'FRAME_HEADER_CRC', 'BASE64_CHAR', ... */
  code: string;
  /** The byte of the input where the fault is. */
  offset: number;
  /** The embd_result number. */
  result: number;
}

export interface DecodeResult {
  version: number;
  flags: number;
  dimensions: number;
  /** A zero-copy view into the source buffer for version-1 frames without flags (clone to keep). */
  vector: Float32Array;
  dtype: Dtype;
}

export interface EncodeOptions { dtype?: Dtype }

export interface ProtobufFrame {
  ids: Uint32Array;
  done: boolean;
  finishReason: string | null;
  /** the field-4 ToolCall records, raw */
  toolCalls: Uint8Array | null;
  index: number;
  offset: number;
  size: number;
}
export interface ProtobufOptions { delta?: boolean; baseId4?: boolean; maxFrameBytes?: number }
/** Holds module memory until finish() or destroy() (dropped without either: until the
 * garbage collector takes it). */
export interface ProtobufReader {
  feed(bytes: Bytes): ProtobufFrame[];
  finish(): ProtobufFrame[];
  /** Releases it now; idempotent. */
  destroy(): void;
}
/** A msgpack-mode frame; toolCalls: the tool_calls value's msgpack bytes, raw. */
export type MsgpackFrame = ProtobufFrame;
export interface MsgpackOptions { delta?: boolean; maxFrameBytes?: number }
export type MsgpackReader = ProtobufReader;

export interface OpenAIOptions {
  dtype?: Dtype;
  byteOrder?: ByteOrder;
  /** exact dims expected (0: any) */
  dims?: number;
}

export interface OpenAIResult {
  /** count x dims, row-major */
  matrix: Float32Array;
  count: number;
  dims: number;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number } | null;
  /** row i as a view of matrix */
  row(i: number): Float32Array;
  rows(): Float32Array[];
}

export interface Base64Options { url?: boolean; pad?: boolean }

export interface LoadOptions {
  /** true: the SIMD128 module, false: the scalar one, 'auto' (default): WebAssembly.validate decides */
  simd?: boolean | 'auto';
  /** a precompiled module or its bytes, for runtimes that forbid compiling at run time */
  module?: WebAssembly.Module | BufferSource;
  /** 'wasm' (default): everything on the WebAssembly module. 'native': the optional
   * Node-API addon (scripts/build-napi.sh; Node only) serves decodeOpenAI, decodeOpenAIAsync
   * (off the event loop, on libuv's thread pool) and decodeBase64Embedding; everything else
   * stays on the module (README: the measured ratios); load() rejects when the addon does not load.
   * 'auto': the addon when it is there and loads in this runtime, else WebAssembly (browsers
   * always get WebAssembly). Same results, same errors (code, offset, message) either way. */
  backend?: 'wasm' | 'native' | 'auto';
  /** the addon's path (default: dist/embd-napi.node beside the .wasm files) */
  addon?: string;
  /** zlib payloads (frame flags bit 0): 'auto' (default) uses node:zlib where it exists (the
   * synchronous calls take them); 'streams' uses CompressionStream / DecompressionStream
   * only, as in a browser (only the asynchronous calls take them) */
  zlib?: 'auto' | 'streams';
  /** false: decodeOpenAIAsync decodes on the event loop (workerState 'off'); true (default):
   * in a worker (see Embd.decodeOpenAIAsync) */
  worker?: boolean;
}

export declare class Embd {
  readonly simd: boolean;
  /** which backend serves the addon's functions: 'native' (the Node-API addon) or 'wasm' */
  readonly backend: 'wasm' | 'native';
  encodeEmbedding(vector: Float32Array | number[], flags?: number, options?: EncodeOptions): ArrayBuffer;
  decodeEmbedding(buf: Bytes): DecodeResult;
  /** decodeEmbedding for any frame, zlib payloads included where there is no node:zlib
   * (DecompressionStream); the synchronous call refuses those with code UNAVAILABLE */
  decodeEmbeddingAsync(buf: Bytes): Promise<DecodeResult>;
  /** encodeEmbedding for any flags, zlib (bit 0) included where there is no node:zlib
   * (CompressionStream) */
  encodeEmbeddingAsync(vector: Float32Array | number[], flags?: number, options?: EncodeOptions): Promise<ArrayBuffer>;
  /** The envelope's copy stays in the module until the generator ends (return() ends it)
   * or the garbage collector takes it. */
  decodeBatch(buf: Bytes): Generator<DecodeResult, void, unknown>;
  encodeBatch(vectors: (Float32Array | number[])[], flags?: number, options?: EncodeOptions): ArrayBuffer;
  decodeOpenAI(body: string | Bytes, options?: OpenAIOptions): OpenAIResult;
  decodeBase64Embedding(s: string | Bytes, options?: { dtype?: Dtype; byteOrder?: ByteOrder }): Float32Array;
  /** decodeOpenAI off the event loop, the same result and the same errors (EmbeddingCodecError
   * with the same code, offset and message). The module: in a worker (node:worker_threads, or
   * a module Web Worker from worker.js beside embd.js) holding its own instance of the same
   * compiled module; one worker per Embd, started by the first call that needs it, calls
   * answered in order, idle it keeps no process alive. Bytes are copied at the call (the
   * caller's buffer stays attached and may be reused at once). Bodies under workerMinBytes
   * decode on the loop: the hand-off costs ~0.1 ms, more than decoding them. Where no worker
   * can start (no Worker, a CSP) it decodes on the loop (workerState 'unavailable'). A worker
   * that dies rejects its calls in flight and the next call starts another. The native
   * backend: on libuv's thread pool. */
  decodeOpenAIAsync(body: string | Bytes, options?: OpenAIOptions): Promise<OpenAIResult>;
  /** decodeOpenAIAsync's worker: 'idle' (none yet, or closed), 'running', 'unavailable' (none
   * could start: the calls decode on the loop; workerError says why), 'off' (load({worker: false}));
   * the native backend has no worker ('idle') */
  readonly workerState: 'idle' | 'running' | 'unavailable' | 'off';
  readonly workerError?: Error;
  /** bodies shorter than this (bytes, or UTF-16 units of a string) decode on the loop; 65536 */
  workerMinBytes: number;
  /** Stops decodeOpenAIAsync's worker (calls in flight reject); a later call starts another.
   * Not needed before exiting. */
  close(): Promise<void>;
  /** HELLO / READY payloads may be objects (their JSON, checked by the C parser) */
  encodeFrame(type: number, payload?: Bytes | string | Record<string, unknown>): Uint8Array;
  parseHandshake(type: number, payload: Bytes | string): Record<string, unknown>;
  loadTokenizerMap(json: string | Bytes, options?: { expectedHash?: string }): TokenizerMap;
  sha256(data: string | Bytes): string;
  encodeTokens(ids: Uint32Array | number[]): Uint8Array;
  decodeFrames(buf: Bytes): CodecFrame[];
  decodeTokens(frame: Bytes): Uint32Array;
  protobufReader(options?: ProtobufOptions): ProtobufReader;
  decodeProtobuf(bytes: Bytes, options?: ProtobufOptions): ProtobufFrame[];
  encodeProtobuf(frame: { ids?: Uint32Array | number[]; done?: boolean; finishReason?: string | null }, options?: { delta?: boolean; baseId?: number; baseId4?: boolean }): Uint8Array;
  msgpackReader(options?: MsgpackOptions): MsgpackReader;
  decodeMsgpack(bytes: Bytes, options?: MsgpackOptions): MsgpackFrame[];
  encodeMsgpack(frame: { ids?: Uint32Array | number[]; done?: boolean; finishReason?: string | null }, options?: { delta?: boolean; baseId?: number }): Uint8Array;
  crc32(data: Bytes, crc?: number): number;
  base64Decode(s: string | Bytes, options?: Base64Options): Uint8Array;
  base64Encode(data: Bytes, options?: Base64Options): string;
  toF32(bytes: Bytes, dtype: Dtype, byteOrder?: ByteOrder): Float32Array;
  fromF32(vector: Float32Array | number[], dtype: Dtype, byteOrder?: ByteOrder): Uint8Array;
  /** 'scalar', 'wasm-simd128', 'auto' */
  setIsa(spec: string): void;
  activeImpl(kernel: number): string;
}

export declare function simdSupported(): boolean;
export declare function load(options?: LoadOptions): Promise<Embd>;
export declare function init(options?: LoadOptions): Promise<Embd>;

export declare function encodeEmbedding(vector: Float32Array | number[], flags?: number, options?: EncodeOptions): ArrayBuffer;
export declare function decodeEmbedding(buf: Bytes): DecodeResult;
export declare function decodeEmbeddingAsync(buf: Bytes): Promise<DecodeResult>;
export declare function encodeEmbeddingAsync(vector: Float32Array | number[], flags?: number, options?: EncodeOptions): Promise<ArrayBuffer>;
export declare function decodeBatch(buf: Bytes): Generator<DecodeResult, void, unknown>;
export declare function encodeBatch(vectors: (Float32Array | number[])[], flags?: number, options?: EncodeOptions): ArrayBuffer;
export declare function decodeEmbeddingFromBuffer(buf: Uint8Array): DecodeResult;
export declare function decodeBatchFromBuffer(buf: Uint8Array): Generator<DecodeResult, void, unknown>;
export declare function decodeOpenAI(body: string | Bytes, options?: OpenAIOptions): OpenAIResult;
export declare function decodeBase64Embedding(s: string | Bytes, options?: { dtype?: Dtype; byteOrder?: ByteOrder }): Float32Array;
export declare function decodeOpenAIAsync(body: string | Bytes, options?: OpenAIOptions): Promise<OpenAIResult>;
export declare function encodeFrame(type: number, payload?: Bytes | string | Record<string, unknown>): Uint8Array;
export declare function parseHandshake(type: number, payload: Bytes | string): Record<string, unknown>;
export declare function loadTokenizerMap(json: string | Bytes, options?: { expectedHash?: string }): TokenizerMap;
export declare function sha256(data: string | Bytes): string;
export declare function encodeTokens(ids: Uint32Array | number[]): Uint8Array;
export declare function decodeFrames(buf: Bytes): CodecFrame[];
export declare function decodeTokens(frame: Bytes): Uint32Array;
export declare function protobufReader(options?: ProtobufOptions): ProtobufReader;
export declare function decodeProtobuf(bytes: Bytes, options?: ProtobufOptions): ProtobufFrame[];
export declare function encodeProtobuf(frame: { ids?: Uint32Array | number[]; done?: boolean; finishReason?: string | null }, options?: { delta?: boolean; baseId?: number; baseId4?: boolean }): Uint8Array;
export declare function msgpackReader(options?: MsgpackOptions): MsgpackReader;
export declare function decodeMsgpack(bytes: Bytes, options?: MsgpackOptions): MsgpackFrame[];
export declare function encodeMsgpack(frame: { ids?: Uint32Array | number[]; done?: boolean; finishReason?: string | null }, options?: { delta?: boolean; baseId?: number }): Uint8Array;
export declare function decodeProtobufStream(source: ChunkSource, options?: ProtobufOptions): AsyncGenerator<ProtobufFrame, void, unknown>;
export declare function decodeMsgpackStream(source: ChunkSource, options?: MsgpackOptions): AsyncGenerator<MsgpackFrame, void, unknown>;
export declare function crc32(data: Bytes, crc?: number): number;
export declare function base64Decode(s: string | Bytes, options?: Base64Options): Uint8Array;
export declare function base64Encode(data: Bytes, options?: Base64Options): string;
export declare function toFloat32(bytes: Bytes, dtype: Dtype, byteOrder?: ByteOrder): Float32Array;
export declare function fromFloat32(vector: Float32Array | number[], dtype: Dtype, byteOrder?: ByteOrder): Uint8Array;

export declare const KERNEL: { CRC32: 0; BSWAP32: 1; BASE64_DECODE: 2; BASE64_ENCODE: 3; CONVERT: 4; CONVERT_ENCODE: 5 };
export declare const kernels: {
  crc32: typeof crc32;
  base64Decode: typeof base64Decode;
  base64Encode: typeof base64Encode;
  toFloat32: typeof toFloat32;
  fromFloat32: typeof fromFloat32;
  setIsa(spec: string): void;
  active(kernel: number): string;
  readonly simd: boolean;
};

export type ChunkSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | ArrayBuffer> | Iterable<Uint8Array | ArrayBuffer>;
export declare function decodeStream(source: ChunkSource, options?: { batch?: boolean; maxFrameBytes?: number }): AsyncGenerator<DecodeResult, void, unknown>;

export declare function decodeFrameStream(source: ChunkSource, options?: { maxPayload?: number }): AsyncGenerator<CodecFrame, void, unknown>;

export interface EmbedOptions { model?: string; useBinaryCodec?: boolean }
export declare class MLEmbedClient {
  constructor(baseUrl: string, apiKey: string, options?: { fetch?: typeof fetch });
  embedOne(text: string, opts?: EmbedOptions): Promise<Float32Array>;
  embedBatch(texts: string[], opts?: EmbedOptions): AsyncGenerator<Float32Array, void, unknown>;
}

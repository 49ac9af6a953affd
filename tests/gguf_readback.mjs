// Reads a GGUF file with @huggingface/gguf (the pinned npm reader under
// build/oracles) and prints what it saw as JSON, for convert_cli_test:
// every key with its GGUF value type and value (BigInts as decimal text,
// arrays as {count, items}), the tensor infos and the data offset.
// Usage: node gguf_readback.mjs MODULE_DIR FILE.gguf
import { createRequire } from "node:module";
import path from "node:path";

const [moduleDir, file] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(moduleDir), "noop.js"));
const { gguf } = require("@huggingface/gguf");

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return { count: v.length, items: v.map(plain) };
  return v;
}

const out = await gguf(path.resolve(file), { allowLocalFile: true, typedMetadata: true });
const metadata = {};
for (const [key, entry] of Object.entries(out.typedMetadata)) {
  // "version", "tensor_count" and "kv_count" are the header, not keys.
  if (key === "version" || key === "tensor_count" || key === "kv_count") continue;
  metadata[key] = { type: entry.type, value: plain(entry.value) };
  if (entry.subType !== undefined) metadata[key].subType = entry.subType;
}
console.log(JSON.stringify({
  version: plain(out.metadata.version),
  tensor_count: plain(out.metadata.tensor_count),
  kv_count: plain(out.metadata.kv_count),
  tensor_data_offset: plain(out.tensorDataOffset),
  metadata,
  tensors: out.tensorInfos.map((t) => ({
    name: t.name, shape: t.shape.map(plain), dtype: t.dtype, offset: plain(t.offset),
  })),
}));

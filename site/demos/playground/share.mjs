// Share links of the playground: playground.html#code=<base64url of deflate-raw of the UTF-8
// code>[&weights=<url>], or #example=<name>. Compression is the browser's own
// CompressionStream("deflate-raw"): no dependency, and links stay short.

const toB64url = (bytes) => {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

const fromB64url = (s) => {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
};

async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

export async function encodeCode(code) {
  return toB64url(await pipe(new TextEncoder().encode(code), new CompressionStream("deflate-raw")));
}

export async function decodeCode(text) {
  return new TextDecoder().decode(await pipe(fromB64url(text), new DecompressionStream("deflate-raw")));
}

// The hash (with its "#") for code and an optional weights URL.
export async function shareHash(code, weights = "") {
  let h = "#code=" + (await encodeCode(code));
  if (weights) h += "&weights=" + encodeURIComponent(weights);
  return h;
}

// What a hash asks for: {code, weights} | {example, weights} | {} (nothing). Throws on a bad code.
export async function readHash(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const weights = p.get("weights") || "";
  if (p.get("code")) return { code: await decodeCode(p.get("code")), weights };
  if (p.get("example")) return { example: p.get("example"), weights };
  return { weights };
}

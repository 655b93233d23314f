// The WHATWG `URL` the schema validator resolves `$id` and `$ref` with, as far as it uses one
// (`href`, `hash`), for the engine, which has none: the core joins and parses with its URL
// library (`__pkuUrlJoin`, core/src/schema.rs). Imported first, so it is there before the
// validator's modules run.
declare const __pkuUrlJoin: (reference: string, base: string) => string;

class HostURL {
  href: string;

  constructor(url: string, base?: string) {
    this.href = __pkuUrlJoin(String(url), base === undefined ? '' : String(base));
  }

  get hash(): string {
    const at = this.href.indexOf('#');
    return at < 0 || at === this.href.length - 1 ? '' : this.href.slice(at);
  }

  set hash(value: string) {
    const at = this.href.indexOf('#');
    const bare = at < 0 ? this.href : this.href.slice(0, at);
    const fragment = value.startsWith('#') ? value.slice(1) : value;
    this.href = fragment === '' ? bare : `${bare}#${fragment}`;
  }

  toString(): string {
    return this.href;
  }
}

if (typeof (globalThis as { URL?: unknown }).URL === 'undefined') {
  Object.defineProperty(globalThis, 'URL', { value: HostURL });
}
